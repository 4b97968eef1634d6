/** The settings table of docs/settings.md, generated from shared/config.ts (a test checks the file carries it). */
import { SETTINGS } from './config.js';

export function settingsTable(): string {
  const rows = Object.entries(SETTINGS).map(([name, s]) => {
    const def = s.schema.parse(undefined) as unknown;
    return `| \`${name}\` | \`${def === '' ? '(empty)' : String(def)}\` | ${s.description} |`;
  });
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}
