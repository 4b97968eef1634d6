/**
 * server/http/drain.ts: a request answered, read to its end with nothing buffered, is marked as
 * needing no draining (node:http's `_dumped`), so node:http does not drain it after the response;
 * any other request is left to node:http, which drains it. Over raw connections: GETs pipelined,
 * with a body sent whole, chunked, larger than the stream's buffer or after the answer; MCP calls
 * pipelined, in pieces, with their header lines in any case.
 */
import t from 'tap';
import net from 'node:net';
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { nothingToDrain } from '../../server/http/drain.js';
import { modernToolCall } from '../helpers/mcp-calls.js';
import { startTestServer } from '../helpers/test-server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('nothingToDrain marks only a request read to its end with nothing buffered', async (t) => {
  const request = (complete: boolean, readableLength: number) =>
    Object.assign(new EventEmitter(), { complete, readableLength }) as unknown as IncomingMessage & {
      _dumped?: boolean;
    };
  const done = request(true, 0);
  nothingToDrain(done);
  t.equal(done._dumped, true, 'complete, nothing buffered: no draining');
  for (const [complete, buffered] of [
    [false, 0],
    [true, 11],
    [false, 11],
  ] as const) {
    const pending = request(complete, buffered);
    nothingToDrain(pending);
    t.equal(
      pending._dumped,
      undefined,
      `complete ${complete}, ${buffered} bytes buffered: left to node:http`,
    );
  }
});

/** A response's status line (bodies here are JSON: they hold no such line). */
const STATUS_LINE = /HTTP\/1\.1 (\d{3}) [A-Za-z ]+\r\n/g;

/**
 * Raw HTTP/1.1 on one connection: writes `requests` (all at once: pipelined) and resolves with the
 * statuses of the responses once `count` of them have arrived.
 */
async function rawExchange(port: number, requests: string, count: number): Promise<number[]> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  let text = '';
  const statuses = () => [...text.matchAll(STATUS_LINE)].map((m) => Number(m[1]));
  try {
    return await new Promise<number[]>((resolve, reject) => {
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (statuses().length >= count) resolve(statuses());
      });
      socket.on('error', reject);
      socket.on('close', () =>
        reject(new Error(`closed after ${statuses().length} responses: ${text.slice(0, 300)}`)),
      );
      socket.write(requests);
    });
  } finally {
    socket.destroy();
  }
}

t.test('one connection: GETs one after another, with and without a body', async (t) => {
  const server = await startTestServer(t);
  const head = (path: string) =>
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.key}\r\n`;
  // 200 requests pipelined on one connection: each answered, in order.
  const many = Array.from(
    { length: 200 },
    (_, i) => `${head(i % 2 ? '/v1/ip/1.1.1.1' : '/v1/asn/13335')}\r\n`,
  );
  t.same(await rawExchange(server.port, many.join(''), 200), Array(200).fill(200));
  // A GET with a body (sent whole, or in chunks), then a plain one: the body is drained, not taken
  // for the next request, and the connection goes on.
  const withBody = `${head('/v1/ip/1.1.1.1')}Content-Length: 11\r\n\r\nhello world`;
  const chunked = `${head('/v1/asn/13335')}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`;
  const plain = `${head('/v1/ip/23.228.249.10')}\r\n`;
  t.same(await rawExchange(server.port, withBody + chunked + plain, 3), [200, 200, 200]);
  // A body larger than the request stream's buffer, sent with its request: node:http stopped
  // reading the socket when the buffer filled; draining it starts the reads again.
  const big = 'x'.repeat(200_000);
  const withBigBody = `${head('/v1/ip/1.1.1.1')}Content-Length: ${big.length}\r\n\r\n${big}`;
  t.same(await rawExchange(server.port, withBigBody + plain, 2), [200, 200]);
  // The same body arriving after the answer was found: dropped as it comes, then the next request.
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.setEncoding('latin1');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(`${head('/v1/ip/1.1.1.1')}Content-Length: ${big.length}\r\n\r\n${big.slice(0, 1000)}`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.write(`${big.slice(1000)}${plain}`);
  const deadline = Date.now() + 5000;
  const answered = () => [...text.matchAll(STATUS_LINE)].map((m) => Number(m[1]));
  while (answered().length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(answered(), [200, 200], 'both answered on the same connection');
  t.match(text, /"ip":"23\.228\.249\.10"/, 'the second answer is the second request');
});

t.test('one connection: MCP calls sent whole, pipelined or in pieces, each answered in order', async (t) => {
  const server = await startTestServer(t);
  const post = (ip: string, id: number) => {
    const call = modernToolCall('lookup_ip', { ip }, id);
    const headers = Object.entries(call.headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    return {
      head:
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.key}\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${headers}` +
        `Content-Length: ${Buffer.byteLength(call.body)}\r\n\r\n`,
      body: call.body,
    };
  };
  const whole = (ip: string, id: number) => {
    const p = post(ip, id);
    return p.head + p.body;
  };
  t.same(await rawExchange(server.port, whole('1.1.1.1', 1), 1), [200]);
  const ips = ['1.1.1.1', '23.228.249.10', '8.8.8.8'];
  // Ten calls pipelined in one write: each body is all there when its request is taken.
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.setEncoding('latin1');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(Array.from({ length: 10 }, (_, i) => whole(ips[i % 3]!, i + 1)).join(''));
  const answers = () => [...text.matchAll(/"structuredContent":\{"ip":"([^"]+)".*?"id":(\d+)\}/g)];
  const wait = async (n: number) => {
    const until = Date.now() + 5000;
    while (answers().length < n && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
  };
  await wait(10);
  t.same(
    answers().map((m) => `${m[2]} ${m[1]}`),
    Array.from({ length: 10 }, (_, i) => `${i + 1} ${ips[i % 3]}`),
    'ten answers, in order, each for its own call',
  );
  // A body that arrives in two pieces, 100 ms apart, then a GET on the same connection.
  const split = post('8.8.8.8', 11);
  socket.write(split.head + split.body.slice(0, 20));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(answers().length, 10, 'no answer before the body is whole');
  socket.write(split.body.slice(20));
  await wait(11);
  t.same(answers()[10]?.slice(1), ['8.8.8.8', '11'], 'the call whose body came in pieces');
  socket.write(
    `GET /v1/ip/23.228.249.10 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.key}\r\n\r\n`,
  );
  const until = Date.now() + 5000;
  const statuses = () => [...text.matchAll(STATUS_LINE)].map((m) => m[1]);
  while (statuses().length < 12 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(statuses(), Array(12).fill('200'), 'twelve 200s');
  t.match(text.slice(text.lastIndexOf('HTTP/1.1')), /"ip":"23\.228\.249\.10"/, 'the last is the GET');
});

/** One request on its own connection (closed by the server after it): the whole response text. */
async function exchangeClosing(port: number, request: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.write(request);
  });
  return text;
}

t.test('MCP: header names in any case, repeated lines as node joins them, X-Request-ID kept', async (t) => {
  const server = await startTestServer(t);
  const call = modernToolCall('lookup_ip', { ip: '23.228.249.10' }, 5);
  /** A call whose header lines are `lines` (name and value as sent), Connection: close. */
  const request = (lines: Array<[string, string]>) =>
    `POST /mcp HTTP/1.1\r\n${lines.map(([n, v]) => `${n}: ${v}\r\n`).join('')}` +
    `Connection: close\r\nContent-Length: ${Buffer.byteLength(call.body)}\r\n\r\n${call.body}`;
  const plain: Array<[string, string]> = [
    ['Host', '127.0.0.1'],
    ['Authorization', `Bearer ${server.key}`],
    ['Content-Type', 'application/json'],
    ['Accept', 'application/json, text/event-stream'],
    ['MCP-Protocol-Version', call.headers['mcp-protocol-version']!],
    ['Mcp-Method', 'tools/call'],
    ['MCP-NAME', 'lookup_ip'],
  ];
  const answer = /"structuredContent":\{"ip":"23\.228\.249\.10".*"id":5\}$/;
  t.match(await exchangeClosing(server.port, request(plain)), /^HTTP\/1\.1 200 /);
  const cases: Array<{
    label: string;
    lines: Array<[string, string]>;
    id?: string;
    status?: number;
  }> = [
    { label: 'names in mixed case', lines: plain },
    {
      label: 'a sane X-Request-ID',
      lines: [...plain, ['X-Request-Id', 'trace-42.a']],
      id: 'trace-42.a',
    },
    {
      label: 'Accept in two lines (node joins them)',
      lines: [
        ...plain.filter(([n]) => n !== 'Accept'),
        ['Accept', 'application/json'],
        ['accept', 'text/event-stream'],
      ],
    },
    {
      // Node keeps the first of two Authorization lines.
      label: 'Authorization twice',
      lines: [...plain, ['Authorization', 'Bearer sk_not_a_key']],
    },
    // A web origin other than the console's: 403.
    { label: 'an Origin', lines: [...plain, ['Origin', 'http://127.0.0.1']], status: 403 },
  ];
  for (const c of cases) {
    const text = await exchangeClosing(server.port, request(c.lines));
    const status = c.status ?? 200;
    t.equal(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1], String(status), `${c.label}: ${status}`);
    if (status === 200) t.match(text, answer, `${c.label}: the tool's answer`);
    const id = /\r\nx-request-id: ([^\r]+)\r\n/i.exec(text)?.[1];
    if (c.id === undefined) t.match(id, UUID, `${c.label}: a new request id`);
    else t.equal(id, c.id, `${c.label}: the client's request id`);
  }
});
