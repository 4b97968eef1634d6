/**
 * A response body in pieces, written in order in one writev: joining them first would copy every
 * byte once more (an MCP result is about 8 KB).
 */
export type BodyChunks = ReadonlyArray<string | Buffer>;

/** The size of the body in bytes (a Content-Length); strings count as UTF-8. */
export function chunksByteLength(chunks: BodyChunks): number {
  let length = 0;
  for (const chunk of chunks) length += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
  return length;
}

/** The body as one buffer, for a comparison (the start-up self-check against the SDK's bytes). */
export function chunksBuffer(chunks: BodyChunks): Buffer {
  return Buffer.concat(chunks.map((chunk) => (typeof chunk === 'string' ? Buffer.from(chunk) : chunk)));
}
