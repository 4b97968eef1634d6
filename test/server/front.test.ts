/**
 * The front of the HTTP stack (server/http/front.ts, docs/decisions/0039): which requests it reads
 * itself (parseHead), that those are answered with the bytes node:http writes for the same request,
 * that a connection is handed to node:http with its unparsed bytes at the first request that is not
 * a plain GET, and the keep-alive, half-close and idle-close rules. The HTTP hygiene tests
 * (http-layer, fuzz, error-envelope, closing, shutdown) run through the front unchanged.
 */
import net from 'node:net';
import t from 'tap';
import { FRONT_MAX_HEAD, parseHead } from '../../server/http/front.js';
import { parseResponse } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';

const head = (text: string) => parseHead(Buffer.from(text, 'latin1'));

t.test('parseHead: the plain GETs the front reads, and what it leaves to node:http', async (t) => {
  const plain =
    'GET /v1/ip/1.1.1.1?as_of=2026-01-01 HTTP/1.1\r\nHost: x\r\nAuthorization:  Bearer k \r\nX-Request-ID: a\r\n\r\n';
  t.same(head(`${plain}GET /next`), {
    url: '/v1/ip/1.1.1.1?as_of=2026-01-01',
    headers: { host: 'x', authorization: 'Bearer k', 'x-request-id': 'a' },
    length: Buffer.byteLength(plain),
  });
  t.same(head('GET / HTTP/1.1\r\nConnection: Keep-Alive\r\n\r\n')?.headers, { connection: 'Keep-Alive' });
  t.same(head('GET /%7e HTTP/1.1\r\n\r\n')?.url, '/%7e', 'a percent escape stays as sent');
  const refused: Record<string, string> = {
    'not all there yet': 'GET /v1/ping HTTP/1.1\r\nHost: x\r\n',
    'a POST': 'POST /mcp HTTP/1.1\r\nHost: x\r\n\r\n',
    'a HEAD': 'HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n',
    'lower-case method': 'get /health HTTP/1.1\r\nHost: x\r\n\r\n',
    'HTTP/1.0': 'GET /health HTTP/1.0\r\nHost: x\r\n\r\n',
    'an absolute-form target': 'GET http://x/health HTTP/1.1\r\nHost: x\r\n\r\n',
    'a space in the target': 'GET /a b HTTP/1.1\r\nHost: x\r\n\r\n',
    'a byte above ASCII in the target': 'GET /caf\xe9 HTTP/1.1\r\nHost: x\r\n\r\n',
    'a quote in the target': 'GET /a"b HTTP/1.1\r\nHost: x\r\n\r\n',
    'a Content-Length': 'GET /health HTTP/1.1\r\nContent-Length: 0\r\n\r\n',
    'a Transfer-Encoding': 'GET /health HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    'an Upgrade': 'GET /health HTTP/1.1\r\nUpgrade: websocket\r\n\r\n',
    'an Expect': 'GET /health HTTP/1.1\r\nExpect: 100-continue\r\n\r\n',
    'Connection: close': 'GET /health HTTP/1.1\r\nConnection: close\r\n\r\n',
    'a field twice': 'GET /health HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n',
    'a folded field': 'GET /health HTTP/1.1\r\nX-A: 1\r\n 2\r\n\r\n',
    'a field without a colon': 'GET /health HTTP/1.1\r\nHost\r\n\r\n',
    'a space before the colon': 'GET /health HTTP/1.1\r\nHost : x\r\n\r\n',
    'a bare LF in a value': 'GET /health HTTP/1.1\r\nX-A: 1\n2\r\n\r\n',
    'a control byte in a value': 'GET /health HTTP/1.1\r\nX-A: 1\x012\r\n\r\n',
    'obs-text in a value': 'GET /health HTTP/1.1\r\nX-A: caf\xe9\r\n\r\n',
    'a __proto__ field': 'GET /health HTTP/1.1\r\n__proto__: x\r\n\r\n',
    '65 fields': `GET /health HTTP/1.1\r\n${Array.from({ length: 65 }, (_, i) => `x-${i}: 1\r\n`).join('')}\r\n`,
    'a head over 8 KiB': `GET /health HTTP/1.1\r\nX-A: ${'a'.repeat(FRONT_MAX_HEAD)}\r\n\r\n`,
  };
  for (const [why, text] of Object.entries(refused)) t.equal(head(text), null, why);
  t.not(
    head(`GET /health HTTP/1.1\r\n${Array.from({ length: 64 }, (_, i) => `x-${i}: 1\r\n`).join('')}\r\n`),
    null,
    '64 fields',
  );
});

/** Writes `parts` on one connection (`pauseMs` between them), collects until `done(bytes)` or a close. */
function exchange(
  port: number,
  parts: string[],
  done: (bytes: Buffer) => boolean,
  pauseMs = 100,
  timeoutMs = 10_000,
): Promise<{ bytes: Buffer; closed: boolean; ms: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const started = performance.now();
    let finished = false;
    const finish = (closed: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ bytes: Buffer.concat(chunks), closed, ms: performance.now() - started });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer: ${Buffer.concat(chunks).toString('latin1')}`));
    }, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (done(Buffer.concat(chunks))) finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => {});
    socket.on('connect', async () => {
      for (let i = 0; i < parts.length; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, pauseMs));
        socket.write(parts[i]!);
      }
    });
  });
}

/** The responses in `bytes`, in order (content-length bodies). */
function responses(bytes: Buffer): Array<{ status: number; headers: Record<string, string>; text: string }> {
  const out = [];
  let rest = bytes;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) break;
    const r = parseResponse(rest);
    const length = end + 4 + Number(r.headers['content-length'] ?? 0);
    if (rest.length < length) break;
    out.push({ status: r.status, headers: r.headers, text: rest.subarray(0, length).toString('latin1') });
    rest = rest.subarray(length);
  }
  return out;
}
const count = (n: number) => (bytes: Buffer) => responses(bytes).length >= n;

t.test('the front answers with the bytes node:http writes for the same request', async (t) => {
  const s = await startTestServer(t);
  const requests = [
    `GET /v1/ip/1.1.1.1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nX-Request-ID: same-1\r\n\r\n`,
    'GET /v1/nothing-here HTTP/1.1\r\nHost: x\r\nX-Request-ID: same-2\r\n\r\n',
    'GET /v1/ip/1.1.1.1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ipk_unknown\r\nX-Request-ID: same-3\r\n\r\n',
    `GET /v1/asn/13335 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nX-Request-ID: same-4\r\n\r\n`,
    'GET /v1/ip/1.1.1.1/ HTTP/1.1\r\nX-Request-ID: same-5\r\n\r\n',
  ];
  // What changes from one answer to the next: the date, the counts of the key's use.
  const masked = (text: string) =>
    text.replace(/^Date: .*$/m, 'Date: *').replace(/^(x-ratelimit-[a-z]+|x-quota-used): \d+$/gim, '$1: *');
  for (const request of requests) {
    const before = { ...s.app.front };
    const front = await exchange(s.port, [request], count(1));
    t.same(s.app.front, { taken: before.taken + 1, handedOver: before.handedOver }, 'the front took it');
    // The same request in two pieces: not all there at first, so node:http's.
    const cut = request.length - 3;
    const node = await exchange(s.port, [request.slice(0, cut), request.slice(cut)], count(1));
    t.same(s.app.front, { taken: before.taken + 1, handedOver: before.handedOver + 1 }, 'node:http took it');
    const [a, b] = [responses(front.bytes)[0]!, responses(node.bytes)[0]!];
    t.equal(masked(a.text), masked(b.text), `${request.split('\r\n')[0]}: ${a.status}, the same bytes`);
    t.match(
      a.text,
      /\r\nDate: [A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT\r\nConnection: keep-alive\r\nKeep-Alive: timeout=72\r\n\r\n/,
    );
  }
});

t.test(
  'pipelined: answered in order; the first request that is not a plain GET hands the rest over',
  async (t) => {
    const s = await startTestServer(t);
    const get = (id: string) =>
      `GET /v1/ip/9.9.9.9 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${s.key}\r\nX-Request-ID: ${id}\r\n\r\n`;
    const before = { ...s.app.front };
    const all =
      get('p-1') + get('p-2') + 'HEAD /health HTTP/1.1\r\nHost: x\r\nX-Request-ID: p-3\r\n\r\n' + get('p-4');
    const r = await exchange(
      s.port,
      [all],
      (bytes) => bytes.toString('latin1').split('x-request-id: ').length === 5,
    );
    const ids = [...r.bytes.toString('latin1').matchAll(/x-request-id: (\S+)/g)].map((m) => m[1]);
    t.same(ids, ['p-1', 'p-2', 'p-3', 'p-4'], 'four answers, in order');
    t.same(
      s.app.front,
      { taken: before.taken + 2, handedOver: before.handedOver + 1 },
      'two by the front, then node:http',
    );
    t.equal(r.closed, false, 'still open');

    // A request split across packets after two whole ones in the first: the rest is node:http's.
    const split = get('q-3');
    const r2 = await exchange(
      s.port,
      [get('q-1') + get('q-2') + split.slice(0, 20), split.slice(20)],
      (bytes) => bytes.toString('latin1').includes('x-request-id: q-3'),
    );
    const ids2 = [...r2.bytes.toString('latin1').matchAll(/x-request-id: (\S+)/g)].map((m) => m[1]);
    t.same(ids2, ['q-1', 'q-2', 'q-3']);
    t.same(s.app.front, { taken: before.taken + 4, handedOver: before.handedOver + 2 });
    t.same(
      responses(r2.bytes).map((x) => x.status),
      [200, 200, 200],
    );
  },
);

t.test('keep-alive timeout, half-close and Connection: close on connections the front holds', async (t) => {
  const s = await startTestServer(t);
  const ping = 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n';
  // Idle after an answer: closed after the keep-alive timeout and its buffer, as node:http does.
  s.app.server.keepAliveTimeout = 300;
  (s.app.server as { keepAliveTimeoutBuffer?: number }).keepAliveTimeoutBuffer = 200;
  const idle = await exchange(s.port, [ping], () => false);
  t.equal(idle.closed, true, 'an idle connection is closed');
  t.ok(idle.ms >= 500, `not before 300 + 200 ms (${Math.round(idle.ms)} ms)`);
  t.ok(idle.ms < 5_000, 'but soon after');
  t.equal(
    responses(idle.bytes)[0]?.headers['keep-alive'],
    'timeout=0',
    'Keep-Alive says the timeout in whole seconds',
  );
  s.app.server.keepAliveTimeout = 72_000;
  (s.app.server as { keepAliveTimeoutBuffer?: number }).keepAliveTimeoutBuffer = 1_000;

  // The client half-closes after two pipelined requests: both answered, then closed.
  const half = await new Promise<{ bytes: Buffer; closed: boolean }>((resolve) => {
    const socket = net.connect(s.port, '127.0.0.1', () => socket.end(ping + ping));
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => resolve({ bytes: Buffer.concat(chunks), closed: true }));
  });
  t.same(
    responses(half.bytes).map((x) => [x.status, x.headers.connection]),
    [
      [200, 'keep-alive'],
      [200, 'close'],
    ],
    'both pipelined requests answered, the last says close',
  );
  t.equal(half.closed, true, 'then closed');

  // Connection: close from the client: node:http's, which answers and closes.
  const before = s.app.front.handedOver;
  const close = await exchange(
    s.port,
    ['GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
    () => false,
  );
  t.equal(s.app.front.handedOver, before + 1);
  t.equal(responses(close.bytes)[0]?.headers.connection, 'close');
  t.equal(close.closed, true);
});

t.test(
  'a connection that sends nothing: 408 after the headers timeout, as node:http answers it',
  async (t) => {
    const s = await startTestServer(t, { timeouts: { headersMs: 600, requestMs: 1_200 } });
    const before = { ...s.app.front };
    const silent = await exchange(s.port, [''], () => false);
    const r = responses(silent.bytes);
    t.same(
      r.map((x) => [x.status, x.headers.connection]),
      [[408, 'close']],
    );
    t.match(r[0]?.text, /\r\n\r\n\{"detail":"Request Timeout: send the headers within 600 ms/);
    t.equal(silent.closed, true, 'closed');
    t.ok(silent.ms >= 600, `not before the timeout (${Math.round(silent.ms)} ms)`);
    t.same(s.app.front, before, 'nothing taken, nothing handed over');

    // One request, then silence: kept alive (the keep-alive timeout, not the headers one, applies).
    const kept = await exchange(s.port, ['GET /health HTTP/1.1\r\nHost: x\r\n\r\n'], () => false, 0).catch(
      (error: Error) => error,
    );
    t.match(String(kept), /no answer/, 'still open after 10 s without a 408');
  },
);
