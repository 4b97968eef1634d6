import type { ValueNumbers } from './value-numbers.js';

/**
 * Reads `[…],[…],…` (group_concat of JSON arrays of strings) one array at a time, numbering the
 * strings without making a string of each.
 */
export class JsonArraysOfText {
  private at = 0;
  private readonly ids: number[] = [];

  constructor(private readonly text: string) {}

  /** The numbers of the next array's strings (null: skip it); the array returned is reused. */
  next(numbers: ValueNumbers | null): number[] {
    const { text } = this;
    const ids = this.ids;
    ids.length = 0;
    let i = this.skipSpace(this.at);
    if (i < text.length && text.charCodeAt(i) === 44 && i > 0) i = this.skipSpace(i + 1); // ','
    if (text.charCodeAt(i) !== 91) throw this.error(i, "'['");
    i = this.skipSpace(i + 1);
    if (text.charCodeAt(i) === 93) {
      this.at = i + 1;
      return ids;
    }
    for (;;) {
      if (text.charCodeAt(i) !== 34) throw this.error(i, 'a string');
      const start = i + 1;
      let end = start;
      let escaped = false;
      for (; end < text.length; end++) {
        const c = text.charCodeAt(end);
        if (c === 34) break;
        if (c === 92) {
          escaped = true;
          end++;
        }
      }
      if (end >= text.length) throw this.error(start, 'the end of a string');
      if (numbers) {
        if (escaped) ids.push(numbers.of(JSON.parse(text.slice(start - 1, end + 1)) as string));
        else ids.push(numbers.inText(text, start, end));
      }
      i = this.skipSpace(end + 1);
      const c = text.charCodeAt(i);
      if (c === 93) break;
      if (c !== 44) throw this.error(i, "',' or ']'");
      i = this.skipSpace(i + 1);
    }
    this.at = i + 1;
    return ids;
  }

  /** Throws unless everything was read. */
  end(): void {
    if (this.skipSpace(this.at) !== this.text.length) throw this.error(this.at, 'the end');
  }

  private skipSpace(i: number): number {
    const { text } = this;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c !== 32 && c !== 9 && c !== 10 && c !== 13) break;
      i++;
    }
    return i;
  }

  private error(at: number, expected: string): Error {
    return new Error(
      `dns_state vals: expected ${expected} at ${JSON.stringify(this.text.slice(at, at + 40))}`,
    );
  }
}
