/** Docs that fail when stale: the README's settings table and builder help match the code. */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../shared/settings-table.js';
import { buildProgram } from '../builder/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

t.test('README settings table is generated from shared/config.ts', async (t) => {
  const block = /<!-- settings:start -->\n([\s\S]*?)\n<!-- settings:end -->/.exec(readme);
  t.ok(block, 'README has the settings markers');
  t.equal(block?.[1], settingsTable());
});

t.test('README lists every builder command with its description', async (t) => {
  for (const command of buildProgram().commands) {
    t.match(readme, `\`builder ${command.name()}`, `README mentions builder ${command.name()}`);
    t.match(readme, command.description(), `README carries the description of ${command.name()}`);
  }
});

t.test('README starts with the two commands', async (t) => {
  const head = readme.split('\n').slice(0, 20).join('\n');
  t.match(head, 'make demo');
  t.match(head, 'make test');
});
