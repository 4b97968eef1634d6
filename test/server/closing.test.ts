/**
 * Graceful close: a request in flight finishes; one arriving on an open connection after close
 * began gets 503 service_unavailable with Retry-After and Connection: close.
 */
import t from 'tap';
import { Client } from 'undici';
import { buildApp } from '../../server/app.js';

t.test('requests during close', async (t) => {
  const app = buildApp({
    releases: {
      current: () => null,
      health: () => ({ status: 'unavailable', id: null, built_at: null, age_seconds: null }),
    },
    accounts: { verifyKey: async () => null, ping: async () => {} },
  });
  let arrived!: () => void;
  const slowArrived = new Promise<void>((resolve) => (arrived = resolve));
  app.get('/slow', async () => {
    arrived();
    await new Promise((resolve) => setTimeout(resolve, 400));
    return 'done';
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const client = new Client(`http://127.0.0.1:${port}`, { pipelining: 2 });
  t.teardown(() => client.destroy());

  const slow = client.request({ path: '/slow', method: 'GET' });
  await slowArrived; // close starts while that request is in flight, however slow the machine
  const closing = app.close();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const late = await client.request({ path: '/health', method: 'GET' });
  t.equal(late.statusCode, 503);
  t.equal(late.headers['retry-after'], '1');
  t.equal(late.headers.connection, 'close');
  t.equal(((await late.body.json()) as { error: string }).error, 'service_unavailable');
  const inFlight = await slow;
  t.equal(inFlight.statusCode, 200, 'the request in flight finished');
  t.equal(await inFlight.body.text(), 'done');
  await closing;
});
