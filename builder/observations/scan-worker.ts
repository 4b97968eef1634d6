/**
 * Worker thread of importObservationFiles: scans chunks of observation lines (scanChunk) while
 * the importing thread applies the previous ones. Messages: { id, bytes, maxRejected, spare } in
 * (spare: output buffers to reuse), { id, chunk } out, the ArrayBuffers transferred both ways.
 */
import { parentPort } from 'node:worker_threads';
import { chunkTransferList, scanChunk, type ChunkBuffers } from './chunks.js';

const port = parentPort;
if (!port) throw new Error('scan-worker.js runs as a worker thread');
port.on('message', (m: { id: number; bytes: Uint8Array; maxRejected: number; spare?: ChunkBuffers }) => {
  const chunk = scanChunk(m.bytes, m.maxRejected, m.spare);
  port.postMessage({ id: m.id, chunk }, chunkTransferList(chunk));
});
