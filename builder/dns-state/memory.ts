/**
 * The typed arrays and byte buffers of the DNS state: grown by copying, allocated in
 * SharedArrayBuffers where save workers read them, and ASCII bytes read back as text.
 */

/**
 * The bytes as a string, one byte per character (Buffer#latin1Slice: no UTF-8 decoding and no
 * encoding lookup as in toString(); twice as fast). For bytes known to be ASCII only.
 */
export function asciiText(b: Buffer, start: number, end: number): string {
  return (b as unknown as { latin1Slice(start: number, end: number): string }).latin1Slice(start, end);
}

/** `to` (larger) with the elements of `from` at its start. */
export function grow<T extends Uint8Array | Uint32Array | Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/*
 * The per-key arrays and the text arenas live in SharedArrayBuffers: the worker threads of a big
 * save read them where they are, without a copy.
 */
export const sharedU8 = (n: number): Uint8Array => new Uint8Array(new SharedArrayBuffer(n));
export const sharedU32 = (n: number): Uint32Array => new Uint32Array(new SharedArrayBuffer(n * 4));
export const sharedF64 = (n: number): Float64Array => new Float64Array(new SharedArrayBuffer(n * 8));
export const sharedBytes = (n: number): Buffer => Buffer.from(new SharedArrayBuffer(n));
