#!/usr/bin/env node
// Rewrites the README's settings table from shared/config.ts (run `npx tsc -p tsconfig.json` first).
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../dist/shared/settings-table.js';

const file = fileURLToPath(new globalThis.URL('../README.md', import.meta.url));
const readme = fs.readFileSync(file, 'utf8');
const re = /<!-- settings:start -->\n[\s\S]*?\n<!-- settings:end -->/;
if (!re.test(readme)) throw new Error('README.md lacks the <!-- settings:start/end --> markers');
fs.writeFileSync(
  file,
  readme.replace(re, `<!-- settings:start -->\n${settingsTable()}\n<!-- settings:end -->`),
);
