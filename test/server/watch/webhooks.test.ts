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
import { parseWatchSubject } from '../../../server/watch/subjects.js';
import { buildReleaseSequence } from '../../helpers/release-sequence.js';

const WATCHED = [
  'art.example',
  'radio.example',
  'shop.example',
  'old-shop.example',
  'quiet.example',
  '1.1.1.1',
  '173.245.48.0/24',
  '104.16.0.0/13',
  '185.220.101.0/24',
  'AS208294',
  'AS60729',
  'AS13335',
];

/** kind, subject, what changed: checked by hand against the inputs of the second release. */
const EXPECTED = [
  'asn.domain_added 13335 art.example',
  'asn.domain_added 13335 shop.example',
  'asn.domain_added 13335 www.art.example',
  'asn.domain_added 13335 www.shop.example',
  'asn.domain_added 208294 tor-exit.example',
  'asn.domain_removed 60729 tor-exit.example',
  'asn.route_added 208294 185.220.101.0/24',
  'asn.route_added 208294 185.220.102.0/24',
  'asn.route_removed 60729 185.220.101.0/24',
  'asn.route_removed 60729 185.220.102.0/24',
  'domain.dns_changed art.example 8.228.70.15 -> 104.16.132.229,2606:4700::6810:84e5',
  'domain.dns_changed old-shop.example 24.144.100.12 -> ',
  'domain.dns_changed radio.example  -> 24.144.100.14',
  'domain.dns_changed shop.example 2600:3c00::f03c:94ff:fe12:3456,72.14.177.42 -> 104.21.48.7,172.67.182.31,2606:4700:3030::6815:3007,2606:4700:3034::ac43:b61f',
  'domain.network_changed art.example Google Cloud -> Cloudflare',
  'domain.network_changed old-shop.example DigitalOcean -> ',
  'domain.network_changed radio.example  -> DigitalOcean',
  'domain.network_changed shop.example Linode -> Cloudflare',
  'ip.domain_added 104.16.0.0/13 art.example 104.16.132.229',
  'ip.domain_added 104.16.0.0/13 shop.example 104.21.48.7',
  'ip.domain_added 104.16.0.0/13 www.art.example 104.16.132.229',
  'ip.domain_added 104.16.0.0/13 www.shop.example 104.21.48.7',
  'ip.range_entered 1.1.1.1 cloudflare 1.1.1.0/24 cdn',
  'ip.range_left 173.245.48.0/24 cloudflare 173.245.48.0/20 cdn',
];

type Data = Record<string, unknown> & { subject: { value: string } };
const providers = (list: unknown) => (list as Array<{ provider: string }>).map((n) => n.provider).join(',');

/** One line per event, in the words of EXPECTED. */
function describe(type: string, data: Data): string {
  const head = `${type} ${data.subject.value}`;
  const range = data.range as { source: string; prefix: string; category: string } | undefined;
  const dns = (side: unknown) => (side as { addresses: string[] }).addresses.join(',');
  if (type.startsWith('asn.route')) return `${head} ${data.route as string}`;
  if (type.startsWith('asn.domain')) return `${head} ${data.domain as string}`;
  if (type === 'domain.dns_changed') return `${head} ${dns(data.old)} -> ${dns(data.new)}`;
  if (type === 'domain.network_changed')
    return `${head} ${providers(data.old_networks)} -> ${providers(data.networks)}`;
  if (type.startsWith('ip.domain')) return `${head} ${data.domain as string} ${data.address as string}`;
  return `${head} ${range!.source} ${range!.prefix} ${range!.category}`;
}

t.test('watched changes of a release sequence arrive signed, once each, and nothing else', async (t) => {
  const dir = t.testdir({});
  const sequence = await buildReleaseSequence(dir);
  const store = openAccountsStore(path.join(dir, 'accounts.sqlite'));
  t.teardown(() => store.close());
  const ws = await store.createWorkspace({ name: 'acme' });
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
  const other = await store.createProject({ workspaceId: ws.id, name: 'other' });
  const entries = WATCHED.map((text) => {
    const parsed = parseWatchSubject(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return { kind: parsed.kind, subject: parsed.subject };
  });
  await store.addWatchEntries(project.id, entries, 100);
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

  const lines = (list: typeof received) =>
    list
      .map(({ body }) => {
        const { type, data } = JSON.parse(body) as { type: string; data: Data };
        return describe(type, data);
      })
      .sort();
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
