/**
 * The baseline of `make bench-api`: a bare node:http server that sends, for each path, the exact
 * response bytes the real server sent (captured beforehand: status, headers and body), with no
 * routing, auth or database. It is the limit of this machine for those bytes. Usage: node
 * bare-http-server.js <responses.ndjson> where each line is [method, path, status, headers, body,
 * requestBody?] (headers: [name, value] pairs, without those node:http writes itself; see
 * captured.ts); prints `listening on <port>`. A line with a request body answers the POST that
 * sends that body (read to its end first, as any server must: an MCP call), the others by method
 * and path.
 */
import http from 'node:http';
import { readCaptured } from './captured.js';

const file = process.argv[2];
if (!file) throw new Error('usage: bare-http-server <responses.ndjson>');
const responses = new Map<string, { status: number; headers: string[]; body: Buffer }>();
/** Method and path of the requests whose body selects the response. */
const byBody = new Set<string>();
for await (const { method, path, status, headers, body, requestBody } of readCaptured(file)) {
  const bytes = Buffer.from(body);
  // A flat [name, value, ...] list, as writeHead takes it, with the length of this body.
  const flat = [...headers.flat(), 'content-length', String(bytes.length)];
  const key = `${method} ${path}`;
  if (requestBody !== undefined) byBody.add(key);
  responses.set(requestBody === undefined ? key : `${key}\n${requestBody}`, {
    status,
    headers: flat,
    body: bytes,
  });
}

function send(
  res: http.ServerResponse,
  hit: { status: number; headers: string[]; body: Buffer } | undefined,
) {
  if (!hit) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(hit.status, hit.headers);
  res.end(hit.body);
}

const server = http.createServer((req, res) => {
  const key = `${req.method} ${req.url}`;
  if (byBody.has(key)) {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => send(res, responses.get(`${key}\n${Buffer.concat(chunks).toString()}`)));
    return;
  }
  if (req.method === 'POST') req.resume();
  send(res, responses.get(key));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on ${typeof address === 'object' && address ? address.port : address}`);
});
// Exits normally on SIGTERM, so node flags such as --cpu-prof (BENCH_NODE_FLAGS) write their output.
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
