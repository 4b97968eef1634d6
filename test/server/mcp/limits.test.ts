/**
 * MCP tool calls and REST lookups under the real limits (server/limits, in-process counters): one
 * per-minute budget and one quota for both, the limit headers on the MCP HTTP response, the meter's
 * refusal as tool error text, and the refused-key throttle of docs/api.md#authentication.
 */
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { loadSettings } from '../../../shared/config.js';
import { apiEnvelope, buildApp } from '../../../server/app.js';
import { createServerServices } from '../../../server/limits/from-settings.js';
import { ReleaseStore } from '../../../server/releases/store.js';
import { createTestKey } from '../../helpers/accounts.js';
import { copyDemoRelease } from '../../helpers/demo-release.js';

const PER_MINUTE = 4;

t.test('REST and MCP share the rate limit; MCP refusals carry the code and headers', async (t) => {
  const dir = t.testdir({});
  copyDemoRelease(path.join(dir, 'releases'));
  const settings = loadSettings(
    {},
    {
      ACCOUNTS_DB: path.join(dir, 'accounts.sqlite'),
      FREE_REQUESTS_PER_MINUTE: PER_MINUTE,
      FREE_MONTHLY_QUOTA: 1000,
    },
  );
  const services = createServerServices(settings);
  const { key } = await createTestKey(services.store);
  const releases = new ReleaseStore({ dir: path.join(dir, 'releases'), pollMs: 60_000 }).start();
  const envelope = apiEnvelope({
    releases,
    accounts: services.accounts,
    meter: services.meter,
    refusedKeys: services.refusedKeys,
  });
  const app = buildApp({ envelope, releases, accounts: services.accounts });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(async () => {
    await app.close();
    await releases.close();
    await services.close();
  });
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

  const mcp = async (auth: string | null, args: Record<string, unknown> = { ip: '104.16.132.229' }) => {
    const r = await request(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(auth !== null && { authorization: `Bearer ${auth}` }),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'lookup_ip', arguments: args },
      }),
    });
    const body = (await r.body.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } };
    return { status: r.statusCode, headers: r.headers, result: body.result };
  };

  const rest = await request(`${base}/v1/ip/104.16.132.229`, { headers: { authorization: `Bearer ${key}` } });
  await rest.body.text();
  t.equal(rest.statusCode, 200);
  t.equal(rest.headers['x-ratelimit-remaining'], String(PER_MINUTE - 1));

  const first = await mcp(key);
  t.notOk(first.result.isError);
  t.equal(first.headers['x-ratelimit-limit'], String(PER_MINUTE));
  t.equal(first.headers['x-ratelimit-remaining'], String(PER_MINUTE - 2), 'the REST call counted too');
  t.ok(first.headers['x-quota-used'], 'quota headers');

  // A refused argument is not counted (released), as on REST.
  const bad = await mcp(key, { ip: 'nope' });
  t.match(bad.result.content[0]!.text, /^Error executing tool lookup_ip: invalid_ip: /);

  await mcp(key);
  await mcp(key);
  const over = await mcp(key);
  t.equal(over.status, 200);
  t.equal(over.result.isError, true);
  t.match(over.result.content[0]!.text, /^Error executing tool lookup_ip: rate_limited: /);
  t.ok(over.headers['retry-after'], 'Retry-After on the HTTP response');
  t.equal(over.headers['x-ratelimit-remaining'], '0');

  // Listing needs no key and is not metered.
  const list = await request(`${base}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(list.statusCode, 200);
  t.match(await list.body.text(), /lookup_asn/);

  // More than 100 refused keys from one address in a minute: rate_limited instead of unauthorized.
  let last = await mcp('sk_wrong');
  t.match(last.result.content[0]!.text, /^Error executing tool lookup_ip: unauthorized: /);
  for (let i = 0; i < 100; i++) last = await mcp(null);
  t.match(last.result.content[0]!.text, /^Error executing tool lookup_ip: rate_limited: /);
  t.ok(last.headers['retry-after']);
});
