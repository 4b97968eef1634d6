/**
 * Graceful close: a request in flight finishes, its response saying `Connection: close`; one
 * arriving on an open, idle keep-alive connection after close began gets 503 service_unavailable
 * with Retry-After and Connection: close (not a reset: idle connections are closed only after
 * IDLE_CLOSE_AFTER_MS); the close completes once both connections are gone.
 */
import t from 'tap';
import net from 'node:net';
import { Client } from 'undici';
import { apiEnvelope, buildApp } from '../../server/app.js';
import { IDLE_CLOSE_AFTER_MS } from '../../server/http/closing.js';

/** The app with no release and no keys. */
function bareApp() {
  const releases = {
    current: () => null,
    health: () => ({ status: 'unavailable' as const, id: null, built_at: null, age_seconds: null }),
  };
  const accounts = { verifyKey: async () => null, ping: async () => {} };
  return buildApp({ envelope: apiEnvelope({ releases, accounts }), releases, accounts });
}

t.test('requests during close', async (t) => {
  const app = bareApp();
  let arrived!: () => void;
  const slowArrived = new Promise<void>((resolve) => (arrived = resolve));
  app.route({
    path: '/slow',
    method: 'GET',
    access: 'public',
    handler: (ex) => {
      arrived();
      setTimeout(() => ex.write(200, 'text/plain; charset=utf-8', {}, 'done'), 400);
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const busy = new Client(`http://127.0.0.1:${port}`);
  const idle = new Client(`http://127.0.0.1:${port}`);
  t.teardown(() => Promise.all([busy.destroy(), idle.destroy()]));
  const before = await idle.request({ path: '/health', method: 'GET' });
  t.equal(before.headers.connection, 'keep-alive');
  await before.body.dump();

  const slow = busy.request({ path: '/slow', method: 'GET' });
  await slowArrived; // close starts while that request is in flight, however slow the machine
  const started = Date.now();
  const closing = app.close();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const late = await idle.request({ path: '/health', method: 'GET' });
  t.equal(late.statusCode, 503);
  t.equal(late.headers['retry-after'], '1');
  t.equal(late.headers.connection, 'close');
  t.equal(((await late.body.json()) as { error: string }).error, 'service_unavailable');
  const inFlight = await slow;
  t.equal(inFlight.statusCode, 200, 'the request in flight finished');
  t.equal(inFlight.headers.connection, 'close', 'and said it was the last on its connection');
  t.equal(await inFlight.body.text(), 'done');
  await closing;
  t.ok(Date.now() - started < IDLE_CLOSE_AFTER_MS, 'closed without waiting for the idle-connection reaper');
});

t.test('an idle keep-alive connection is closed after IDLE_CLOSE_AFTER_MS, not at once', async (t) => {
  const app = bareApp();
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const socket = net.connect(port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  const ended = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  while (!text.includes('"status"')) await new Promise((resolve) => setTimeout(resolve, 10));
  const started = Date.now();
  await app.close();
  const closedAt = await ended;
  t.ok(closedAt - started >= IDLE_CLOSE_AFTER_MS - 50, `closed after ${closedAt - started} ms`);
  t.match(text, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(text, /\r\nconnection: keep-alive\r\n/i);
});
