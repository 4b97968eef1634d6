/**
 * Docs that fail when stale: the settings table of docs/settings.md and the builder commands of
 * docs/operations.md match the code; the README stays a front door (the two commands first, at most
 * 250 lines).
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { settingsTable } from '../shared/settings-table.js';
import { buildProgram } from '../builder/cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const readme = read('README.md');

t.test('docs/settings.md: the settings table is generated from shared/config.ts', async (t) => {
  const block = /<!-- settings:start -->\n([\s\S]*?)\n<!-- settings:end -->/.exec(read('docs/settings.md'));
  t.ok(block, 'docs/settings.md has the settings markers');
  t.equal(block?.[1], settingsTable());
});

t.test('docs/operations.md lists every builder command with its description', async (t) => {
  const operations = read('docs/operations.md');
  for (const command of buildProgram().commands) {
    t.match(
      operations,
      `\`builder ${command.name()}`,
      `docs/operations.md mentions builder ${command.name()}`,
    );
    t.match(
      operations,
      command.description(),
      `docs/operations.md carries the description of ${command.name()}`,
    );
  }
});

t.test('README starts with the two commands', async (t) => {
  const head = readme.split('\n').slice(0, 20).join('\n');
  t.match(head, 'make demo');
  t.match(head, 'make test');
});

t.test('README is a front door: at most 250 lines', async (t) => {
  const lines = readme.endsWith('\n') ? readme.split('\n').length - 1 : readme.split('\n').length;
  t.ok(lines <= 250, `README.md has ${lines} lines`);
});
