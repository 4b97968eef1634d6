/** FNV-1a, 32 bits: the hash of names and addresses in the builder's tables and the server's filters. */
export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/**
 * FNV-1a of bytes [start, end): a name's hash in the builder's DNS state (the name table and the
 * line scanner compute the same value while they read a name's bytes).
 */
export function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
  return h;
}

/** FNV-1a of the UTF-16 code units of `text` in [start, end). */
export function hashText(text: string, start = 0, end = text.length): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return h;
}
