/** Reads a feed fixture from test/fixtures/feeds/<source>/<file>. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FEEDS = fileURLToPath(new URL('../fixtures/feeds/', import.meta.url));

export function fixture(source: string, file: string): string {
  return readFileSync(`${FEEDS}${source}/${file}`, 'utf8');
}

/** Replaces the first occurrence of `search` (which must exist) in `text`. */
export function breakText(text: string, search: string, replacement: string): string {
  if (!text.includes(search)) throw new Error(`fixture does not contain ${JSON.stringify(search)}`);
  return text.replace(search, replacement);
}
