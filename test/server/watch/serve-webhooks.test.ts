/**
 * The watch service in the real server (server/serve.ts, port 0): a release published into its
 * releases directory while it runs is diffed against the one it served, and the watched change
 * arrives at a loopback receiver as a webhook that the `standardwebhooks` package verifies. With
 * WEBHOOK_DELIVERY=off the events are computed all the same and wait in the outbox.
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAccountsStore } from '../../../accounts/index.js';
import { loadSettings } from '../../../shared/config.js';
import { serve } from '../../../server/serve.js';
import { buildReleaseSequence, publisherOf } from '../../helpers/release-sequence.js';
import { startWebhookReceiver, until } from '../../helpers/webhook-receiver.js';

// Two releases built once (the real feed excerpts and observation rounds), published by each test.
const built = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-webhooks-'));
t.teardown(() => fs.rmSync(built, { recursive: true, force: true }));
const sequence = await buildReleaseSequence(built);
const [firstId, secondId] = sequence.ids as [string, string];

t.test('a published release brings the watched change as a verified webhook', async (t) => {
  const dir = t.testdir({});
  const { releasesDir, publish } = publisherOf(sequence, dir);
  publish(firstId);

  const receiver = await startWebhookReceiver(t, () => ({ status: 204 }));
  // Each request as the assertions read it: its webhook-id, the event's type and subject.
  const received = () =>
    receiver.requests.map((r) => {
      const { type, data } = JSON.parse(r.body) as { type: string; data: { subject: { value: string } } };
      return { id: r.id, type, subject: data.subject.value, verified: r.verified };
    });

  const accountsDb = path.join(dir, 'accounts.sqlite');
  const store = openAccountsStore(accountsDb);
  t.teardown(() => store.close());
  const ws = await store.createWorkspace({ name: 'acme' });
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
  await store.addWatchEntries(project.id, [{ kind: 'domain', subject: 'art.example' }], 100);
  const created = await store.createEndpoint({
    projectId: project.id,
    url: receiver.url,
    kinds: ['domain.network_changed'],
  });
  receiver.secret = created.secret;

  const settings = loadSettings(
    {},
    {
      ACCOUNTS_DB: accountsDb,
      RELEASES_DIR: releasesDir,
      STATE_DIR: path.join(dir, 'state'),
      PORT: 0,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      RELEASE_POLL_MS: 100,
      WEBHOOK_POLL_MS: 100,
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    },
  );
  const server = await serve(settings, () => {});
  t.teardown(server.stop);
  await until('the first release to start the chain', () => server.watch.handledRelease === firstId);
  t.equal(received().length, 0, 'the first release brings nothing');

  publish(secondId);
  await until('the webhook', () => received().length > 0);
  t.match(received(), [{ type: 'domain.network_changed', subject: 'art.example', verified: true }]);
  t.match(received()[0]!.id, /^evt_[a-z2-7]{26}$/);
  await until('the delivery to be recorded', async () =>
    (await store.listDeliveries(created.endpoint.id)).every((d) => d.state === 'delivered'),
  );
  t.equal(received().length, 1, 'once');
  const stopped = Date.now();
  await server.stop();
  t.ok(Date.now() - stopped < 5_000, 'stops promptly');
});

t.test('WEBHOOK_DELIVERY=off: events are computed, nothing is sent', async (t) => {
  const dir = t.testdir({});
  const { releasesDir, publish } = publisherOf(sequence, dir);
  publish(firstId);
  const accountsDb = path.join(dir, 'accounts.sqlite');
  const store = openAccountsStore(accountsDb);
  t.teardown(() => store.close());
  const ws = await store.createWorkspace({ name: 'acme' });
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
  await store.addWatchEntries(project.id, [{ kind: 'domain', subject: 'art.example' }], 100);
  const receiver = await startWebhookReceiver(t, () => ({ status: 204 }));
  const created = await store.createEndpoint({ projectId: project.id, url: receiver.url, kinds: [] });
  const server = await serve(
    loadSettings(
      {},
      {
        ACCOUNTS_DB: accountsDb,
        RELEASES_DIR: releasesDir,
        STATE_DIR: path.join(dir, 'state'),
        PORT: 0,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'silent',
        RELEASE_POLL_MS: 100,
        WEBHOOK_POLL_MS: 100,
        WEBHOOK_ALLOW_HTTP: 'true',
        WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
        WEBHOOK_DELIVERY: 'off',
      },
    ),
    () => {},
  );
  t.teardown(server.stop);
  await until('the first release', () => server.watch.handledRelease === firstId);
  publish(secondId);
  await until('the second release', () => server.watch.handledRelease === secondId);
  const events = await store.listEvents({ projectId: project.id, limit: 100 });
  t.ok(events.length > 0, `events computed (${events.length})`);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const deliveries = await store.listDeliveries(created.endpoint.id);
  t.equal(deliveries.length, events.length, 'one delivery per event in the outbox');
  t.ok(
    deliveries.every((d) => d.state === 'pending' && d.attempts === 0),
    'all pending',
  );
  t.equal(receiver.requests.length, 0, 'nothing sent');
});
