#!/usr/bin/env node
// Entry point of `npx builder`: runs the compiled CLI (run `npm run build` first; make does it).
import { main } from '../dist/builder/cli.js';

await main(process.argv);
