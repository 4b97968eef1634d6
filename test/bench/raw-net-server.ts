/**
 * The machine's floor below node:http, for the MMDB peer section of `make bench-api` (bench-peer.ts):
 * a plain `net` server that answers keep-alive GETs with the exact bytes the real server sent
 * (the captured file of bare-http-server.ts: status, headers, body; plus the Date, Connection and
 * Keep-Alive headers node:http writes, and the length), found by path. It reads a request up to
 * the blank line after its headers and nothing else: no request bodies, no chunked encoding, no
 * timeouts, no header limits, so it is no server anyone should run. What it measures is what the
 * HTTP layer itself costs: the bare node:http server sends the same bytes, and the difference
 * between the two is node:http's own work per request (its request and response objects, their
 * events and timers). Usage: node raw-net-server.js <responses.ndjson>; prints `listening on <port>`.
 */
import net from 'node:net';
import { STATUS_CODES } from 'node:http';
import { readCaptured } from './captured.js';

const file = process.argv[2];
if (!file) throw new Error('usage: raw-net-server <responses.ndjson>');
/** Per path, the status line and headers up to (not including) Date, and the body. */
const responses = new Map<string, { head: string; body: Buffer }>();
for await (const { method, path, status, headers, body } of readCaptured(file)) {
  if (method !== 'GET') continue;
  const bytes = Buffer.from(body);
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n`;
  for (const [name, value] of headers) head += `${name}: ${value}\r\n`;
  head += `content-length: ${bytes.length}\r\n`;
  responses.set(path, { head, body: bytes });
}
const NOT_FOUND = Buffer.from('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');

/** Date, Connection and Keep-Alive as node:http writes them, the date text renewed once a second. */
let second = 0;
let tail = '';
function trailer(): string {
  const now = Math.floor(Date.now() / 1000);
  if (now !== second) {
    second = now;
    tail = `Date: ${new Date(now * 1000).toUTCString()}\r\nConnection: keep-alive\r\nKeep-Alive: timeout=60\r\n\r\n`;
  }
  return tail;
}

const server = net.createServer((socket) => {
  socket.setNoDelay(true);
  let pending = '';
  socket.on('data', (chunk: Buffer) => {
    pending += chunk.toString('latin1');
    let end: number;
    let corked = false;
    while ((end = pending.indexOf('\r\n\r\n')) !== -1) {
      const requestLine = pending.slice(0, pending.indexOf('\r\n'));
      pending = pending.slice(end + 4);
      const path = requestLine.slice(requestLine.indexOf(' ') + 1, requestLine.lastIndexOf(' '));
      const hit = requestLine.startsWith('GET ') ? responses.get(path) : undefined;
      if (!corked) {
        socket.cork();
        corked = true;
      }
      if (hit === undefined) socket.write(NOT_FOUND);
      else {
        socket.write(hit.head + trailer(), 'latin1');
        socket.write(hit.body);
      }
    }
    if (corked) socket.uncork();
  });
  socket.on('error', () => socket.destroy());
});
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on ${typeof address === 'object' && address ? address.port : address}`);
});
// Exits normally on SIGTERM, so node flags such as --cpu-prof (BENCH_NODE_FLAGS) write their output.
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 1000).unref();
});
