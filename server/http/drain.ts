/**
 * Tells node:http that a request answered, read to its end with no body bytes waiting, needs no
 * draining (docs/decisions/0009). When a response finishes, node:http "dumps" every request the
 * handler did not read (resume, read to the end, destroy): six process.nextTick hops per request on
 * Node 20 (a bare node:http server, 1,000 keep-alive GETs: 21 ticks per exchange, client included,
 * against 15). Measured on /v1/asn (bench-api, 2 × 2 runs alternating): 41.4 and 44.4 µs of CPU per
 * request without, 37.3 and 37.8 with. `_dumped` is the flag node:http's own `_dump()` sets
 * (lib/_http_incoming.js) so that it runs once; a Node without it drains as before. A request not
 * yet read to its end, or with body bytes buffered, is left to node:http: a buffered body may have
 * stopped the socket's reads, which only its draining starts again (test/server/drain.test.ts).
 * Called when the answer is written: at the 'request' event the message is not complete yet.
 */
import type { HttpRequest } from './message.js';

export function nothingToDrain(req: HttpRequest): void {
  if (req.complete && req.readableLength === 0) {
    (req as HttpRequest & { _dumped?: boolean })._dumped = true;
  }
}
