/**
 * An endpoint failing for a day is disabled and the workspace's owners, and only they, get one
 * e-mail through the console's mailer over real SMTP (the console tests' sink): the receiver
 * answers 500, the deliverer's clock moves a day on between two attempts.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { openAccountsStore } from '../../../accounts/index.js';
import { createMailer } from '../../../console/mailer.js';
import { parseCidr } from '../../../shared/ip.js';
import { DISABLE_AFTER_MS, Deliverer } from '../../../server/watch/deliverer.js';
import { createSender } from '../../../server/watch/send.js';
import { startMailSink } from '../../helpers/console.js';

t.test('a day of failures disables the endpoint and e-mails the owners once', async (t) => {
  const dir = t.testdir({});
  const store = openAccountsStore(path.join(dir, 'accounts.sqlite'));
  t.teardown(() => store.close());
  const ws = await store.createWorkspace({ name: 'acme' });
  await store.addMember(ws.id, 'Owner@Example.org', 'owner');
  await store.addMember(ws.id, 'second-owner@example.org', 'owner');
  await store.addMember(ws.id, 'dev@example.org', 'member');
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });

  let requests = 0;
  const receiver = http.createServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => res.writeHead(500).end('down'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => receiver.close());
  const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const { endpoint } = await store.createEndpoint({ projectId: project.id, url, kinds: [] });

  const sink = await startMailSink(t);
  const mailer = createMailer({
    smtpUrl: sink.url,
    from: 'ipscope <noreply@ipscope.test>',
    outbox: dir,
    log: () => {},
  });
  t.teardown(() => mailer.close());
  const sender = createSender({ allowHttp: true, allowed: [parseCidr('127.0.0.1/32')!] });
  t.teardown(() => sender.close());
  let now = new Date('2026-12-01T00:00:00.000Z');
  const deliverer = new Deliverer({
    store,
    sender,
    owner: 'test',
    mailer,
    clock: () => now,
    schedule: [1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000],
  });

  await store.createTestEvent(
    endpoint.id,
    (id) => JSON.stringify({ type: 'webhook.test', data: { id } }),
    now,
  );
  t.equal(await deliverer.runOnce(), 1, 'first attempt');
  t.ok((await store.getEndpoint(endpoint.id))?.failingSince, 'failing since the first failure');
  t.equal((await store.getEndpoint(endpoint.id))?.disabledAt, null, 'not yet disabled');

  now = new Date(now.getTime() + DISABLE_AFTER_MS + 60_000);
  t.equal(await deliverer.runOnce(), 1, 'an attempt a day later');
  t.ok((await store.getEndpoint(endpoint.id))?.disabledAt, 'disabled');
  const first = await sink.next('owner@example.org', 0);
  const second = await sink.next('second-owner@example.org', 0);
  for (const mail of [first, second]) {
    t.equal(mail.subject, `Webhook endpoint disabled: ${new URL(url).host}`);
    t.match(mail.text, endpoint.id);
    t.match(mail.text, 'project "web"');
  }

  // Disabled: nothing more is claimed, nobody else is written to, no second mail.
  now = new Date(now.getTime() + 3_600_000);
  t.equal(await deliverer.runOnce(), 0, 'a disabled endpoint is not claimed');
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.same(
    sink.mails.map((m) => m.to).sort(),
    ['owner@example.org', 'second-owner@example.org'],
    'the owners only, once',
  );
  t.equal(requests, 2);
});
