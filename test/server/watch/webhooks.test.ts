/**
 * Watched changes arrive as signed webhooks, exactly: three releases built from the real feed
 * excerpts and observation rounds (test/helpers/release-sequence.ts), a project watching domains,
 * an address, prefixes and AS numbers, and a receiver on loopback that verifies every delivery
 * with the `standardwebhooks` package. The second release's events arrive once each, as listed by
 * hand from the inputs (the Cloudflare list and mapping edits, rounds 3 and 4); the third release
 * (the same inputs) and computing a pair again bring nothing. A receiver that fails for a while
 * gets every event later with the same webhook-id; a rotation signs with both secrets.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Webhook } from 'standardwebhooks';
import { openAccountsStore } from '../../../accounts/index.js';
import { parseCidr } from '../../../shared/ip.js';
import { openRelease } from '../../../shared/queries/index.js';
import { Deliverer } from '../../../server/watch/deliverer.js';
import { computeReleaseEvents } from '../../../server/watch/runs.js';
import { createSender } from '../../../server/watch/send.js';
import { checkWebhookUrl, type GuardOptions } from '../../../server/watch/ssrf.js';
import { buildReleaseSequence } from '../../helpers/release-sequence.js';
import { EXPECTED, describeDelivery, watchedEntries } from '../../helpers/watch-expected.js';

t.test('watched changes of a release sequence arrive signed, once each, and nothing else', async (t) => {
  const dir = t.testdir({});
  const sequence = await buildReleaseSequence(dir);
  const store = openAccountsStore(path.join(dir, 'accounts.sqlite'));
  t.teardown(() => store.close());
  const ws = await store.createWorkspace({ name: 'acme' });
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
  const other = await store.createProject({ workspaceId: ws.id, name: 'other' });
  await store.addWatchEntries(project.id, watchedEntries(), 100);
  await store.addWatchEntries(other.id, [{ kind: 'domain', subject: 'quiet.example' }], 100);

  // The receiver: fails the first 3 requests (500, then a slow 503), then verifies and keeps each.
  const received: Array<{ id: string; body: string; verifiedWith: string[] }> = [];
  let secrets: string[] = [];
  let requests = 0;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests += 1;
      if (requests <= 2) return void res.writeHead(500).end('not yet');
      if (requests === 3) return void setTimeout(() => res.writeHead(503).end('slow'), 300);
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = req.headers as Record<string, string>;
      const verifiedWith = secrets.filter((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      received.push({ id: headers['webhook-id']!, body, verifiedWith });
      res.writeHead(verifiedWith.length > 0 ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => receiver.close());
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const guard: GuardOptions = { allowHttp: true, allowed: [parseCidr('127.0.0.1/32')!] };
  await checkWebhookUrl(url, guard);
  const created = await store.createEndpoint({ projectId: project.id, url, kinds: [] });
  secrets = [created.secret];

  const sender = createSender(guard);
  t.teardown(() => sender.close());
  const deliverer = new Deliverer({ store, sender, owner: 'test', schedule: [50, 50, 50, 50, 50, 50, 50] });
  const deliverAll = async () => {
    for (let i = 0; i < 40; i++) {
      await deliverer.drain();
      const pending = (await store.listDeliveries(created.endpoint.id)).filter((d) => d.state === 'pending');
      if (pending.length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 60));
    }
  };

  const [first, second] = sequence.ids.map((id) =>
    openRelease(path.join(sequence.releasesDir, `${id}.sqlite`)),
  );
  t.teardown(() => [first, second].forEach((r) => r!.close()));
  t.same(await computeReleaseEvents(store, sequence.releasesDir, first!, 'a'), { status: 'started_chain' });
  const outcome = await computeReleaseEvents(store, sequence.releasesDir, second!, 'a');
  t.match(outcome, {
    status: 'computed',
    previous: first!.id,
    events: EXPECTED.length,
    inserted: EXPECTED.length,
  });
  t.same(
    await computeReleaseEvents(store, sequence.releasesDir, second!, 'b'),
    { status: 'skipped' },
    'once',
  );
  await deliverAll();

  const lines = (list: typeof received) => list.map(({ body }) => describeDelivery(body)).sort();
  t.same(lines(received), [...EXPECTED].sort(), 'every watched change, nothing else');
  t.equal(new Set(received.map((r) => r.id)).size, received.length, 'each once');
  t.ok(
    received.every((r) => r.verifiedWith.length === 1),
    'all verified by standardwebhooks',
  );
  for (const r of received) t.equal((JSON.parse(r.body) as { data: { id: string } }).data.id, r.id);
  const log = await store.listAttempts(created.endpoint.id, 1000);
  const failedIds = log.filter((a) => !a.ok).map((a) => a.eventId);
  t.equal(failedIds.length, 3, 'three failed attempts logged');
  t.ok(
    failedIds.every((id) => received.some((r) => r.id === id)),
    'each failed event arrived later, same webhook-id',
  );
  t.ok(
    log.some((a) => a.status === 503 && a.replyHead === 'slow' && a.durationMs >= 250),
    'slow reply logged',
  );

  // A third release from the same inputs: nothing changed, nothing sent.
  const thirdId = await sequence.rebuild();
  const third = openRelease(path.join(sequence.releasesDir, `${thirdId}.sqlite`));
  t.teardown(() => third.close());
  t.match(await computeReleaseEvents(store, sequence.releasesDir, third, 'a'), {
    status: 'computed',
    events: 0,
  });

  // A rotation: the next delivery is signed with both secrets, each verifying on its own.
  const rotated = await store.rotateEndpointSecret(created.endpoint.id, new Date(Date.now() + 86_400_000));
  secrets = [created.secret, rotated];
  const testId = await store.createTestEvent(created.endpoint.id, (id) =>
    JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: { id } }),
  );
  await deliverAll();
  const last = received.at(-1)!;
  t.equal(last.id, testId, 'the test event arrived');
  t.same(last.verifiedWith, secrets, 'verified with the old and the new secret');
  t.equal(received.length, EXPECTED.length + 1, 'and nothing else');
});
