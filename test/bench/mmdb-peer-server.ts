/**
 * The peer of `make bench-api`'s peer section (bench-peer.ts, issue 35): what a user who only needs
 * IP → network would run instead of this service: the release exported with `builder export mmdb`,
 * read by the npm `maxmind` reader (its defaults: the file in memory, an LRU cache of 10,000
 * records) behind bare node:http, answering GET /v1/ip/{ip} with the record as JSON
 * (`JSON.stringify(reader.get(ip))`, `null` where the file has none). No key, no metering, no
 * framework. Usage: node mmdb-peer-server.js <file.mmdb>; prints `listening on <port>`.
 */
import http from 'node:http';
import maxmind from 'maxmind';

const file = process.argv[2];
if (!file) throw new Error('usage: mmdb-peer-server <file.mmdb>');
const reader = await maxmind.open(file);
const PREFIX = '/v1/ip/';

const server = http.createServer((req, res) => {
  const url = req.url ?? '';
  const ip = url.startsWith(PREFIX) ? decodeURIComponent(url.slice(PREFIX.length)) : '';
  if (!maxmind.validate(ip)) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not an address\n');
    return;
  }
  const body = JSON.stringify(reader.get(ip));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on ${typeof address === 'object' && address ? address.port : address}`);
});
// Exits normally on SIGTERM, so node flags such as --cpu-prof (BENCH_NODE_FLAGS) write their output.
process.on('SIGTERM', () => server.close(() => process.exit(0)).closeAllConnections());
