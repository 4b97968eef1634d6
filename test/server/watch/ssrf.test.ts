/**
 * Webhooks go to public addresses only, at creation and at every attempt: loopback, private,
 * link-local (169.254.169.254), CGNAT and the IPv4-mapped and NAT64 IPv6 forms of those are
 * refused, as is a name resolving to one of them (the real `localhost`, and names of a stand-in
 * resolver), a name that resolves publicly at creation and to loopback at delivery (DNS
 * rebinding: nothing reaches the receiver), and a redirect to a receiver that is not allowed
 * (not followed). Plain http and URLs with credentials are refused unless allowed.
 */
import t from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseCidr } from '../../../shared/ip.js';
import { createSender } from '../../../server/watch/send.js';
import { addressProblem, checkWebhookUrl, type GuardOptions } from '../../../server/watch/ssrf.js';

const REFUSED = [
  '127.0.0.1',
  '127.1.2.3',
  '0.0.0.0',
  '10.0.0.1',
  '172.16.5.4',
  '192.168.1.1',
  '169.254.169.254',
  '100.64.0.1',
  '224.0.0.1',
  '255.255.255.255',
  '::1',
  '::',
  'fe80::1',
  'fc00::1',
  'fd12:3456::1',
  '::ffff:127.0.0.1',
  '::ffff:7f00:1',
  '::ffff:169.254.169.254',
  '::ffff:10.0.0.1',
  '::ffff:100.64.0.1',
  '64:ff9b::a9fe:a9fe',
  '64:ff9b::127.0.0.1',
];
const PUBLIC = ['8.8.8.8', '1.1.1.1', '2606:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808'];

t.test('the address table', async (t) => {
  for (const address of REFUSED) t.match(addressProblem(address, []), /not a public address/, address);
  for (const address of PUBLIC) t.equal(addressProblem(address, []), null, address);
  t.equal(addressProblem('127.0.0.1', [parseCidr('127.0.0.1/32')!]), null, 'an allowed block');
  t.equal(addressProblem('::ffff:127.0.0.1', [parseCidr('127.0.0.1/32')!]), null, 'its mapped form too');
});

t.test('at creation', async (t) => {
  const names: Record<string, string[]> = {
    'metadata.example': ['169.254.169.254'],
    'mixed.example': ['8.8.8.8', '10.1.2.3'],
    'mapped.example': ['::ffff:127.0.0.1'],
    'cgnat.example': ['100.64.1.1'],
    'public.example': ['8.8.4.4', '2001:4860:4860::8888'],
  };
  const guard: GuardOptions = {
    allowHttp: false,
    allowed: [],
    resolve: async (host) => {
      const list = names[host];
      if (!list) throw new Error('ENOTFOUND');
      return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    },
  };
  for (const url of [
    'https://127.0.0.1/h',
    'https://[::1]/h',
    'https://[::ffff:169.254.169.254]/h',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/h',
    'https://metadata.example/h',
    'https://mixed.example/h',
    'https://mapped.example/h',
    'https://cgnat.example/h',
  ]) {
    await t.rejects(checkWebhookUrl(url, guard), /not a public address/, url);
  }
  await t.rejects(
    checkWebhookUrl('https://localhost/h', { allowHttp: false, allowed: [] }),
    /not a public address/,
    'the real localhost',
  );
  await t.rejects(checkWebhookUrl('http://public.example/h', guard), /http: URLs are refused/);
  await t.rejects(checkWebhookUrl('https://u:p@public.example/h', guard), /user or password/);
  await t.rejects(checkWebhookUrl('ftp://public.example/h', guard), /refused/);
  t.equal((await checkWebhookUrl('https://public.example/h', guard)).host, 'public.example');
  t.ok(await checkWebhookUrl('http://public.example/h', { ...guard, allowHttp: true }), 'http when allowed');
});

t.test('at delivery: rebinding and redirects', async (t) => {
  let hits = 0;
  const receiver = http.createServer((req, res) => {
    hits += 1;
    res.writeHead(204).end();
  });
  const elsewhere = http.createServer((req, res) => {
    hits += 100;
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.2', resolve));
  const redirector = http.createServer((req, res) => {
    res
      .writeHead(302, { location: `http://127.0.0.2:${(elsewhere.address() as AddressInfo).port}/` })
      .end('moved');
  });
  await new Promise<void>((resolve) => redirector.listen(0, '127.0.0.1', resolve));
  t.teardown(() => [receiver, elsewhere, redirector].forEach((s) => s.close()));
  const port = (s: http.Server) => (s.address() as AddressInfo).port;

  // The name resolves publicly when the endpoint is created, to loopback afterwards.
  let lookups = 0;
  const guard: GuardOptions = {
    allowHttp: true,
    allowed: [],
    resolve: async () => [{ address: lookups++ === 0 ? '93.184.215.14' : '127.0.0.1', family: 4 }],
  };
  const url = `http://rebind.example:${port(receiver)}/h`;
  await checkWebhookUrl(url, guard);
  const sender = createSender(guard);
  t.teardown(() => sender.close());
  const attempt = await sender.send(url, 'evt_x', '{}', ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw']);
  t.match(attempt, { ok: false, status: null, error: /not a public address/ });
  t.equal(hits, 0, 'nothing reached the receiver');

  // A redirect to an address that is not allowed is not followed.
  const loopbackOnly: GuardOptions = { allowHttp: true, allowed: [parseCidr('127.0.0.1/32')!] };
  const redirecting = createSender(loopbackOnly);
  t.teardown(() => redirecting.close());
  const moved = await redirecting.send(`http://127.0.0.1:${port(redirector)}/h`, 'evt_y', '{}', [
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  ]);
  t.match(moved, { ok: false, status: 302, error: 'redirect not followed', replyHead: 'moved' });
  t.equal(hits, 0, 'the redirect target got nothing');
  await t.rejects(
    checkWebhookUrl(`http://127.0.0.2:${port(elsewhere)}/`, loopbackOnly),
    /not a public address/,
    'and would be refused as a URL',
  );
  const direct = await redirecting.send(`http://127.0.0.2:${port(elsewhere)}/`, 'evt_z', '{}', [
    'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  ]);
  t.match(direct, { ok: false, status: null, error: /not a public address/ });
  t.equal(hits, 0);
});
