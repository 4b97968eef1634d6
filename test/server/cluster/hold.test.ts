/**
 * Requests held while a cluster's workers change release (server/cluster/hold.ts): a request that
 * arrives during a hold is answered only once it ends, in the order they came; outside a hold the
 * server's emit is its own again.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { holdRequests } from '../../../server/cluster/hold.js';

async function listen(t: Test, handle: http.RequestListener) {
  const server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

t.test('held requests wait for the end of the hold, then are answered in order', async (t) => {
  let phase = 'old';
  const { server, url } = await listen(t, (req, res) => res.end(`${phase} ${req.url}`));
  t.equal(await (await fetch(`${url}/before`)).text(), 'old /before');
  const letGo = holdRequests(server, 10_000);
  t.ok(Object.hasOwn(server, 'emit'), 'emit replaced during the hold');
  const answered: string[] = [];
  const pending = ['/a', '/b', '/c'].map((p) =>
    fetch(`${url}${p}`).then(async (r) => answered.push(await r.text())),
  );
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.same(answered, [], 'nothing answered during the hold');
  phase = 'new';
  letGo();
  await Promise.all(pending);
  t.same(answered.sort(), ['new /a', 'new /b', 'new /c'], 'every held request answered after it');
  t.notOk(Object.hasOwn(server, 'emit'), 'emit is the prototype’s again');
  letGo();
  t.equal(await (await fetch(`${url}/after`)).text(), 'new /after', 'ending twice changes nothing');
});

t.test('other events go through during a hold; a hold nobody ends ends by itself', async (t) => {
  const { server, url } = await listen(t, (req, res) => res.end('ok'));
  let connections = 0;
  server.on('connection', () => (connections += 1));
  const started = Date.now();
  holdRequests(server, 200);
  const r = await fetch(`${url}/x`);
  t.equal(await r.text(), 'ok');
  t.equal(connections, 1, 'the connection event was not held');
  t.ok(Date.now() - started >= 190, 'answered once the 200 ms limit ran out');
});
