/**
 * The bytes of JSON text as the line scanner reads them: the ASCII codes of its punctuation, and
 * comparisons of byte ranges.
 */

export const QUOTE = 0x22;
export const COMMA = 0x2c;
export const DASH = 0x2d;
export const DOT = 0x2e;
export const COLON = 0x3a;
export const LBRACKET = 0x5b;
export const BACKSLASH = 0x5c;
export const RBRACKET = 0x5d;
export const UNDERSCORE = 0x5f;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;

/**
 * Whether bytes [start, start + length) of b are `expected`. Every buffer the scanner compares is
 * a Buffer (lines, literals, the cached time): one kind of array keeps element loads monomorphic.
 */
export function equalBytes(b: Buffer, start: number, length: number, expected: Buffer): boolean {
  if (length !== expected.length) return false;
  for (let i = 0; i < length; i++) if (b[start + i] !== expected[i]) return false;
  return true;
}

/** Negative, zero or positive as bytes [s1, e1) sort before, equal or after [s2, e2). */
export function compareBytes(b: Buffer, s1: number, e1: number, s2: number, e2: number): number {
  const n = Math.min(e1 - s1, e2 - s2);
  for (let i = 0; i < n; i++) {
    const d = b[s1 + i]! - b[s2 + i]!;
    if (d !== 0) return d;
  }
  return e1 - s1 - (e2 - s2);
}
