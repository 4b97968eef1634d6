#!/usr/bin/env node
// Entry point of `npx server`: runs the compiled CLI (run `npm run build` first; make does it).
import { main } from '../dist/server/cli.js';

await main(process.argv);
