/**
 * The MCP fast path (server/mcp/handler.ts, docs/decisions/0009): a plain tools/call answered
 * without the SDK must be byte for byte what the SDK answers. Two metered servers, FAST_LANE=on and
 * FAST_LANE=off, get the same calls in the same order, in both eras: same status, body and headers
 * (but the request id and the date), and the fast path answered exactly the calls it may answer.
 */
import { assertContract } from '../../helpers/contract.js';
import t, { type Test } from 'tap';
import { request } from 'undici';
import { startKeyedMeteredServer } from '../../helpers/limits.js';
import { MODERN, modernToolCall } from '../../helpers/mcp-calls.js';

const ACCEPT = 'application/json, text/event-stream';

interface Call {
  label: string;
  body: string;
  headers: Record<string, string>;
  /** Whether the fast path may answer it. */
  fast: boolean;
}

function modern(tool: string, args: unknown, fast: boolean, id: string | number = 1, extraMeta = {}): Call {
  return {
    label: `${MODERN} ${tool} ${JSON.stringify(args)} ${JSON.stringify(extraMeta)}`,
    ...modernToolCall(tool, args, id, extraMeta),
    fast,
  };
}

function legacy(
  tool: string,
  args: unknown,
  fast: boolean,
  version: string | null = '2025-06-18',
  id: string | number = 'a',
): Call {
  return {
    label: `${version} ${tool} ${JSON.stringify(args)}`,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    }),
    headers: version === null ? {} : { 'mcp-protocol-version': version },
    fast,
  };
}

const CALLS: Call[] = [
  modern('lookup_ip', { ip: '1.1.1.1' }, true),
  modern('lookup_ip', { ip: '1.1.1.1' }, true, 'str-id'),
  modern('lookup_ip', { ip: '10.0.0.1' }, true, 3), // a bogon: answered, not counted
  modern('ip_domains', { ip: '23.228.249.10' }, true),
  modern('ip_domains', { ip: '23.228.249.10', limit: 1 }, true),
  modern('domain_history', { domain: 'example.com' }, true),
  modern('domain_hosting', { domain: 'example.com' }, true),
  modern('lookup_asn', { asn: 'AS13335' }, true),
  modern('lookup_asn', { asn: 13335, limit: 2 }, true),
  legacy('lookup_ip', { ip: '2600:9000:3001:a400:9:6f0a:3c00:93a1' }, true),
  legacy('lookup_ip', { ip: '1.1.1.1' }, true, '2025-03-26', 99),
  legacy('lookup_ip', { ip: '1.1.1.1' }, true, '2025-11-25'),
  legacy('domain_history', { domain: 'example.net' }, true, null),
  legacy('lookup_asn', { asn: '64512' }, true),
  // The SDK's to answer: refused arguments, other shapes, other _meta.
  modern('lookup_ip', { ip: '999.1.1.1' }, false),
  modern('lookup_ip', {}, false),
  modern('ip_domains', { ip: '10.0.0.1' }, false),
  modern('lookup_asn', { asn: 'AS13335', limit: 0 }, false),
  modern('lookup_asn', { asn: 'AS13335', cursor: 'garbage' }, false),
  modern('lookup_ip', { ip: '1.1.1.1' }, false, 5, { progressToken: 7 }),
  modern('no_such_tool', { ip: '1.1.1.1' }, false),
  legacy('lookup_ip', { ip: 'example.com' }, false),
  legacy('lookup_ip', { ip: '1.1.1.1' }, false, '2024-11-05'),
  modern('lookup_ip', { ip: '1.1.1.1' }, true, 8),
];

const metered = (t: Test, fastLane: 'on' | 'off') => startKeyedMeteredServer(t, { FAST_LANE: fastLane });

async function post(url: string, call: Call, key: string | null) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: ACCEPT,
    ...call.headers,
  };
  if (key !== null) headers.authorization = `Bearer ${key}`;
  const r = await request(`${url}/mcp`, { method: 'POST', headers, body: call.body });
  const text = await r.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers))
    if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  assertContract({ method: 'POST', url: '/mcp', status: r.statusCode, headers: flat, body: text });
  const { 'x-request-id': _id, date: _date, 'x-ratelimit-reset': reset, ...rest } = flat;
  return { status: r.statusCode, text, headers: rest, reset };
}

t.test('the fast path and the SDK answer every call alike, in both eras', async (t) => {
  const on = await metered(t, 'on');
  const off = await metered(t, 'off');
  let fast = 0;
  for (const call of CALLS) {
    const a = await post(on.server.url, call, on.key);
    const b = await post(off.server.url, call, off.key);
    t.equal(a.status, b.status, `${call.label}: status ${b.status}`);
    t.equal(a.text, b.text, `${call.label}: body`);
    t.same(a.headers, b.headers, `${call.label}: headers`);
    if (b.reset === undefined) t.equal(a.reset, undefined, `${call.label}: no X-RateLimit-Reset`);
    else t.ok(Number(a.reset) >= 1 && Number(a.reset) <= 60, `${call.label}: X-RateLimit-Reset ${a.reset}`);
    if (call.fast) fast += 1;
    t.equal(on.server.app.fastLaneAnswered(), fast, `${call.label}: ${call.fast ? 'fast path' : 'the SDK'}`);
  }
  // Without a key or with an unknown one, the SDK answers the refusal.
  for (const key of [null, 'sk_notakey']) {
    const a = await post(on.server.url, CALLS[0]!, key);
    const b = await post(off.server.url, CALLS[0]!, key);
    t.equal(a.text, b.text, `key ${key}: the same refusal`);
    t.match(a.text, /Error executing tool lookup_ip: unauthorized: /);
  }
  t.equal(on.server.app.fastLaneAnswered(), fast, 'refusals never take the fast path');
  t.equal(off.server.app.fastLaneAnswered(), 0, 'FAST_LANE=off: nothing takes it');
  const last = await post(on.server.url, CALLS[0]!, on.key);
  const lastOff = await post(off.server.url, CALLS[0]!, off.key);
  t.equal(last.headers['x-quota-used'], lastOff.headers['x-quota-used'], 'the same calls were counted');
});
