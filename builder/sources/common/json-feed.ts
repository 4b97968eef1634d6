/** JSON feeds: whole-file shape checked with zod, line numbers recovered for rejected items. */
import type { z } from 'zod';
import { utcTimestamp } from './timestamps.js';

/**
 * Parses `text` as JSON and checks it against `schema`. Throws an Error that names the file
 * and says what was expected when the text is not JSON or not in the feed's shape: such a
 * file is refused as a whole, never half-imported.
 */
export function parseJsonFeed<S extends z.ZodType>(
  text: string,
  file: string,
  schema: S,
  formatName: string,
): z.output<S> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const position = /position (\d+)/.exec(message);
    const where = position ? ` (line ${lineAt(text, Number(position[1]))})` : '';
    throw new Error(`${file}: expected ${formatName} (JSON), but it is not valid JSON${where}: ${message}`);
  }
  const result = schema.safeParse(data);
  if (!result.success) {
    const issues = result.error.issues
      .slice(0, 3)
      .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(top level)'}: ${issue.message}`)
      .join('; ');
    throw new Error(`${file}: not in the ${formatName} shape: ${issues}`);
  }
  return result.data;
}

/** A feed timestamp field, or undefined when absent. Throws (naming the file) when present but unreadable. */
export function feedTimestamp(value: string | undefined, file: string, field: string): string | undefined {
  if (value === undefined) return undefined;
  const iso = utcTimestamp(value);
  if (iso === null) {
    throw new Error(
      `${file}: expected "${field}" to be a UTC timestamp like 2026-08-21T14:45:42, got ${JSON.stringify(value)}`,
    );
  }
  return iso;
}

function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = 0; i < index && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Finds the line of a string value in the raw JSON text, for the 1-based line number of a
 * rejected item. Items are looked up in document order, so the search continues from the
 * previous hit; a value that cannot be found (escaped differently) gets the last known line.
 * Single-line JSON files always give line 1.
 */
export class JsonLineLocator {
  private index = 0;
  private line = 1;

  constructor(private readonly text: string) {}

  lineOf(value: string): number {
    const needle = JSON.stringify(value);
    let at = this.text.indexOf(needle, this.index);
    if (at < 0) {
      at = this.text.indexOf(needle);
      if (at < 0) return this.line;
      this.index = 0;
      this.line = 1;
    }
    for (let i = this.index; i < at; i++) if (this.text.charCodeAt(i) === 10) this.line++;
    this.index = at;
    return this.line;
  }
}
