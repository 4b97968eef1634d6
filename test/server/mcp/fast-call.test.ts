/**
 * The fast tools/call (server/mcp/fast-call.ts) against the SDK's encoding, end to end: each call
 * is sent to a metered server, and the very same JSON-RPC message and headers are run through the
 * SDK (`@modelcontextprotocol/server`, its own transports) with a tool that returns the result our
 * server answered (its content, structured content, isError). The SDK's bytes must be ours, in both
 * eras, for answers, bogons and refusals, with string and number ids; calls the SDK answers itself
 * (other shapes) are compared the same way. Every response passes the contract, and the answers
 * carry the same JSON as their REST endpoint.
 */
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  type CallToolResult,
} from '@modelcontextprotocol/server';
import t from 'tap';
import { request } from 'undici';
import { assertContract } from '../../helpers/contract.js';
import { startKeyedMeteredServer } from '../../helpers/limits.js';
import { MODERN, modernToolCall } from '../../helpers/mcp-calls.js';
import { sameClockText } from '../../helpers/same-clock.js';

const ACCEPT = 'application/json, text/event-stream';

interface Call {
  label: string;
  tool: string;
  body: string;
  headers: Record<string, string>;
  /** The REST path of the same lookup, when the call answers. */
  rest?: string;
  /** The error code of a refused call. */
  refusal?: string;
}

function modern(
  tool: string,
  args: unknown,
  more: Partial<Call> = {},
  id: string | number = 1,
  meta = {},
): Call {
  return {
    label: `${MODERN} ${tool} ${JSON.stringify(args)} ${JSON.stringify(meta)}`,
    tool,
    ...modernToolCall(tool, args, id, meta),
    ...more,
  };
}

function legacy(
  tool: string,
  args: unknown,
  more: Partial<Call> = {},
  version: string | null = '2025-06-18',
  id: string | number = 'a',
): Call {
  return {
    label: `${version} ${tool} ${JSON.stringify(args)}`,
    tool,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    }),
    headers: version === null ? {} : { 'mcp-protocol-version': version },
    ...more,
  };
}

const CALLS: Call[] = [
  modern('lookup_ip', { ip: '1.1.1.1' }, { rest: '/v1/ip/1.1.1.1' }),
  modern('lookup_ip', { ip: '1.1.1.1' }, { rest: '/v1/ip/1.1.1.1' }, 'str-id'),
  modern('lookup_ip', { ip: '10.0.0.1' }, { rest: '/v1/ip/10.0.0.1' }, 3), // a bogon: answered, not counted
  modern('ip_domains', { ip: '23.228.249.10' }, { rest: '/v1/ip/23.228.249.10/domains' }),
  modern('ip_domains', { ip: '23.228.249.10', limit: 1 }, { rest: '/v1/ip/23.228.249.10/domains?limit=1' }),
  modern('domain_history', { domain: 'example.com' }, { rest: '/v1/domain/example.com/history' }),
  modern('domain_hosting', { domain: 'example.com' }, { rest: '/v1/domain/example.com/hosting' }),
  modern('lookup_asn', { asn: 'AS13335' }, { rest: '/v1/asn/AS13335' }),
  modern('lookup_asn', { asn: 13335, limit: 2 }, { rest: '/v1/asn/13335?limit=2' }),
  legacy(
    'lookup_ip',
    { ip: '2600:9000:3001:a400:9:6f0a:3c00:93a1' },
    {
      rest: '/v1/ip/2600:9000:3001:a400:9:6f0a:3c00:93a1',
    },
  ),
  legacy('lookup_ip', { ip: '1.1.1.1' }, { rest: '/v1/ip/1.1.1.1' }, '2025-03-26', 99),
  legacy('lookup_ip', { ip: '1.1.1.1' }, { rest: '/v1/ip/1.1.1.1' }, '2025-11-25'),
  legacy('domain_history', { domain: 'example.net' }, { rest: '/v1/domain/example.net/history' }, null),
  legacy('lookup_asn', { asn: '64512' }, { rest: '/v1/asn/64512' }),
  legacy('lookup_ip', { ip: '1.1.1.1' }, { rest: '/v1/ip/1.1.1.1' }, '2024-11-05'),
  // Refused, on the fast call too: the codes of the error table.
  modern('lookup_ip', { ip: '999.1.1.1' }, { refusal: 'invalid_ip' }),
  modern('lookup_ip', {}, { refusal: 'invalid_ip' }),
  modern('ip_domains', { ip: '10.0.0.1' }, { refusal: 'non_public_ip' }),
  modern('lookup_asn', { asn: 'AS13335', limit: 0 }, { refusal: 'invalid_arguments' }),
  modern('lookup_asn', { asn: 'AS13335', cursor: 'garbage' }, { refusal: 'invalid_cursor' }),
  modern('lookup_ip', { ip: '1.1.1.1', as_of: 'yesterday' }, { refusal: 'as_of_out_of_range' }),
  modern('domain_hosting', { domain: 'example.com', as_of: 20261005 }, { refusal: 'as_of_out_of_range' }),
  modern('lookup_asn', { asn: 'AS13335', as_of: '2026-10-05' }, { refusal: 'as_of_out_of_range' }),
  legacy('lookup_ip', { ip: 'example.com' }, { refusal: 'invalid_ip' }),
  // Other shapes, answered by the SDK.
  modern('lookup_ip', { ip: '1.1.1.1' }, { rest: '/v1/ip/1.1.1.1' }, 5, { progressToken: 7 }),
  modern('no_such_tool', { ip: '1.1.1.1' }),
];

interface Sent {
  status: number;
  text: string;
  headers: Record<string, string>;
}

async function post(url: string, call: Call, key: string | null): Promise<Sent> {
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
  return { status: r.statusCode, text, headers: flat };
}

/** The bytes the SDK sends for `call` when its tool returns `result` (null: no such tool). */
async function sdkAnswer(
  call: Call,
  result: CallToolResult | null,
): Promise<{ status: number; text: string }> {
  const server = new McpServer({ name: 'ipscope', version: '0.1.0' }, { capabilities: { tools: {} } });
  if (result !== null) server.registerTool(call.tool, { description: 'the same result' }, () => result);
  const body = JSON.parse(call.body) as unknown;
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: new Headers({ 'content-type': 'application/json', accept: ACCEPT, ...call.headers }),
    body: call.body,
  });
  let response: Response;
  if (call.headers['mcp-protocol-version'] === MODERN) {
    const warn = console.warn;
    console.warn = () => {};
    try {
      const handler = createMcpHandler(() => server, {
        legacy: 'reject',
        responseMode: 'json',
        onerror: () => {},
      });
      response = await handler.fetch(request, { parsedBody: body });
      await handler.close();
    } finally {
      console.warn = warn;
    }
  } else {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    response = await transport.handleRequest(request, { parsedBody: body });
    await server.close();
  }
  return { status: response.status, text: await response.text() };
}

/** The tool result a response carries (null: no result, a JSON-RPC error). */
function resultOf(text: string): CallToolResult | null {
  const message = JSON.parse(text) as { result?: Record<string, unknown> };
  if (message.result === undefined) return null;
  const { content, structuredContent, isError } = message.result as CallToolResult;
  return {
    content,
    ...(structuredContent !== undefined && { structuredContent }),
    ...(isError !== undefined && { isError }),
  };
}

t.test('each call is what the SDK sends for its result, byte for byte, in both eras', async (t) => {
  const { server, key } = await startKeyedMeteredServer(t);
  let counted = 0;
  for (const call of CALLS) {
    const ours = await post(server.url, call, key);
    const result = resultOf(ours.text);
    const sdk = await sdkAnswer(call, call.tool === 'no_such_tool' ? null : result);
    t.equal(ours.status, sdk.status, `${call.label}: status ${sdk.status}`);
    t.equal(ours.text, sdk.text, `${call.label}: the SDK's bytes`);
    t.equal(ours.headers['content-type'], 'application/json', `${call.label}: the SDK's content type`);
    if (call.rest !== undefined) {
      t.notOk(result?.isError, `${call.label}: answered`);
      const rest = await server.get(call.rest, { key });
      const text = (result!.content[0] as { text: string }).text;
      t.equal(sameClockText(text, rest.text), rest.text, `${call.label}: the JSON of GET ${call.rest}`);
      t.same(result!.structuredContent, JSON.parse(text), `${call.label}: structured as its text`);
      // Both the call and the GET counted (a bogon neither).
      const bogon = call.rest.startsWith('/v1/ip/10.');
      t.equal(ours.headers['x-quota-used'], String(bogon ? counted : counted + 1), `${call.label}: its unit`);
      if (!bogon) counted += 2;
    }
    if (call.refusal !== undefined) {
      t.equal(result?.isError, true, `${call.label}: a tool error`);
      t.match(
        (result!.content[0] as { text: string }).text,
        new RegExp(`^Error executing tool ${call.tool}: ${call.refusal}: .+`),
        `${call.label}: ${call.refusal}`,
      );
      t.equal(ours.headers['x-quota-used'], String(counted), `${call.label}: not counted`);
    }
  }
  // Without a key or with an unknown one: the same refusal, the SDK's bytes.
  for (const k of [null, 'sk_notakey']) {
    const call = CALLS[0]!;
    const ours = await post(server.url, call, k);
    const sdk = await sdkAnswer(call, resultOf(ours.text));
    t.equal(ours.text, sdk.text, `key ${k}: the SDK's bytes`);
    t.match(ours.text, /Error executing tool lookup_ip: unauthorized: /, `key ${k}: unauthorized`);
    t.equal(ours.headers['x-quota-used'], undefined, `key ${k}: no limit headers`);
  }
});
