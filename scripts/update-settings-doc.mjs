#!/usr/bin/env node
// Rewrites the settings table of docs/settings.md from shared/config.ts (run `npx tsc -p tsconfig.json` first).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../dist/shared/settings-table.js';

const file = fileURLToPath(new globalThis.URL('../docs/settings.md', import.meta.url));
const doc = fs.readFileSync(file, 'utf8');
const re = /<!-- settings:start -->\n[\s\S]*?\n<!-- settings:end -->/;
if (!re.test(doc)) throw new Error('docs/settings.md lacks the <!-- settings:start/end --> markers');
fs.writeFileSync(file, doc.replace(re, `<!-- settings:start -->\n${settingsTable()}\n<!-- settings:end -->`));
