/**
 * The generator's output: ASCII lines collected in a buffer per file, each full buffer written
 * through a stream that respects backpressure, so memory stays flat whatever the number of
 * domains.
 */
import { once } from 'node:events';
import type { WriteStream } from 'node:fs';

/** Bytes collected per file before they are handed to its stream (about 10,000 lines). */
const CHUNK_BYTES = 2 * 1024 * 1024;
/** Room kept free in a chunk for one more domain's lines. */
const CHUNK_SLACK = 64 * 1024;

/** Collects ASCII lines in a buffer and hands full buffers to a write stream. */
export class ChunkWriter {
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  bytes = 0;

  constructor(private readonly stream: WriteStream) {}

  /** Appends lines (ASCII only: one byte per character). */
  add(text: string): void {
    if (this.used + text.length > this.buffer.length) this.grow(text.length);
    this.used += this.buffer.write(text, this.used, 'latin1');
  }

  get full(): boolean {
    return this.used > CHUNK_BYTES - CHUNK_SLACK;
  }

  /** Writes the collected bytes; resolves when the stream can take more. */
  async flush(): Promise<void> {
    if (this.used === 0) return;
    const chunk = this.buffer.subarray(0, this.used);
    this.bytes += this.used;
    this.buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  async end(): Promise<void> {
    await this.flush();
    this.stream.end();
    await once(this.stream, 'finish');
  }

  private grow(extra: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.used + extra));
    this.buffer.copy(bigger, 0, 0, this.used);
    this.buffer = bigger;
  }
}
