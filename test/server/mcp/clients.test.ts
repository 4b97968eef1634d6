/**
 * POST /mcp driven by the real clients against the real app (demo release, real accounts store):
 * the v2 client pinned to 2026-07-28 and the v1 client over Streamable HTTP (2025 era), listing and
 * calling every tool with and without a key; each answer equals the REST endpoint's JSON, and each
 * refusal is the exact tool-error text of docs/api.md#mcp.
 */
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as V2Client,
  StreamableHTTPClientTransport as V2Transport,
} from '@modelcontextprotocol/client';
import t from 'tap';
import { ERROR_TABLE } from '../../../shared/errors.js';
import { startTestServer, type TestServer } from '../../helpers/test-server.js';
import { sameClock } from '../../helpers/same-clock.js';

const MODERN = '2026-07-28';

interface ToolResult {
  content?: Array<{ type: string; text?: string }>;
  structuredContent?: unknown;
  isError?: boolean;
}

interface McpClient {
  era: string;
  protocolVersion(): string | undefined;
  listTools(): Promise<{
    tools: Array<{
      name: string;
      description?: string;
      inputSchema: { properties?: Record<string, { description?: string }>; required?: string[] };
      annotations?: { readOnlyHint?: boolean; destructiveHint?: boolean };
    }>;
  }>;
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

async function v1Client(url: string, key: string | null): Promise<McpClient> {
  const client = new V1Client({ name: 'ipscope-test-v1', version: '1.0.0' });
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  const transport = new V1Transport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  return {
    era: '2025 (v1 client)',
    protocolVersion: () => transport.protocolVersion,
    listTools: () => client.listTools() as ReturnType<McpClient['listTools']>,
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  };
}

async function v2Client(url: string, key: string | null): Promise<McpClient> {
  const client = new V2Client(
    { name: 'ipscope-test-v2', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
  const headers: Record<string, string> = key === null ? {} : { authorization: `Bearer ${key}` };
  await client.connect(new V2Transport(new URL(url), { requestInit: { headers } }));
  return {
    era: `${MODERN} (v2 client)`,
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    listTools: () => client.listTools() as ReturnType<McpClient['listTools']>,
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    close: () => client.close(),
  };
}

const CLIENTS = [
  { name: 'v2 client, 2026-07-28', connect: v2Client, version: MODERN },
  { name: 'v1 client, 2025 era', connect: v1Client, version: undefined },
];

/** Every tool with arguments and the REST path answering the same question. */
const CALLS: Array<{ tool: string; args: Record<string, unknown>; rest: string }> = [
  { tool: 'lookup_ip', args: { ip: '104.16.132.229' }, rest: '/v1/ip/104.16.132.229' },
  { tool: 'lookup_ip', args: { ip: '10.0.0.1' }, rest: '/v1/ip/10.0.0.1' },
  {
    tool: 'ip_domains',
    args: { ip: '104.16.132.229', include_ended: true, limit: 5 },
    rest: '/v1/ip/104.16.132.229/domains?include_ended=true&limit=5',
  },
  {
    tool: 'domain_history',
    args: { domain: 'example.com', limit: 2 },
    rest: '/v1/domain/example.com/history?limit=2',
  },
  { tool: 'domain_hosting', args: { domain: 'example.com' }, rest: '/v1/domain/example.com/hosting' },
  { tool: 'lookup_asn', args: { asn: 'AS13335', limit: 3 }, rest: '/v1/asn/AS13335?limit=3' },
  { tool: 'lookup_asn', args: { asn: 13335 }, rest: '/v1/asn/13335' },
];

const refusal = (tool: string, code: string, message: string) =>
  `Error executing tool ${tool}: ${code}: ${message}`;

function textOf(result: ToolResult): string {
  const block = result.content?.[0];
  return block?.type === 'text' ? (block.text ?? '') : '';
}

let server: TestServer;
t.before(async () => {
  server = await startTestServer(t);
});

for (const { name, connect, version } of CLIENTS) {
  t.test(`${name}: lists the five lookups and the change feed without a key`, async (t) => {
    const client = await connect(`${server.url}/mcp`, null);
    t.teardown(() => client.close());
    if (version) t.equal(client.protocolVersion(), version);
    const { tools } = await client.listTools();
    t.same(
      tools.map((tool) => tool.name),
      ['lookup_ip', 'ip_domains', 'domain_history', 'domain_hosting', 'lookup_asn', 'list_changes'],
    );
    for (const tool of tools) {
      t.equal(tool.annotations?.readOnlyHint, true, `${tool.name} is read-only`);
      t.equal(tool.annotations?.destructiveHint, false);
      t.match(tool.description, /same JSON as GET \/v1\//, `${tool.name} says what it returns`);
      // The reading rules are the release lookups'; the change feed answers from the accounts store.
      if (tool.name !== 'list_changes')
        t.match(tool.description, /null means unknown/, `${tool.name} carries the reading rules`);
      for (const [arg, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        t.ok(schema.description && schema.description.length > 20, `${tool.name}.${arg} is described`);
      }
    }
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    t.same(byName.get('lookup_ip')?.inputSchema.required, ['ip']);
    t.same(Object.keys(byName.get('ip_domains')?.inputSchema.properties ?? {}), [
      'ip',
      'include_ended',
      'limit',
      'cursor',
      'from',
      'to',
      'strict',
      'as_of',
    ]);
    t.match(byName.get('domain_history')?.description, /next_cursor/, 'paging is explained');
  });

  t.test(`${name}: every tool answers the REST endpoint's JSON`, async (t) => {
    const client = await connect(`${server.url}/mcp`, server.key);
    t.teardown(() => client.close());
    for (const call of CALLS) {
      const result = await client.callTool(call.tool, call.args);
      const rest = await server.get(call.rest);
      t.equal(rest.status, 200, call.rest);
      t.notOk(result.isError, `${call.tool} ${JSON.stringify(call.args)} is not an error`);
      const expected = rest.json();
      t.same(
        sameClock(result.structuredContent, expected),
        expected,
        `${call.tool} structured content = ${call.rest}`,
      );
      t.same(sameClock(JSON.parse(textOf(result)), expected), expected, `${call.tool} text = ${call.rest}`);
    }
  });

  t.test(`${name}: pages with next_cursor like REST`, async (t) => {
    const client = await connect(`${server.url}/mcp`, server.key);
    t.teardown(() => client.close());
    const first = (await client.callTool('lookup_asn', { asn: 13335, limit: 1 })).structuredContent as {
      next_cursor: string | null;
    };
    t.type(first.next_cursor, 'string');
    const second = await client.callTool('lookup_asn', { asn: 13335, limit: 1, cursor: first.next_cursor });
    const rest = await server.get(`/v1/asn/13335?limit=1&cursor=${encodeURIComponent(first.next_cursor!)}`);
    t.same(second.structuredContent, rest.json());
  });

  t.test(`${name}: a call without a valid key is refused with unauthorized`, async (t) => {
    const cases: Array<[string, string | null]> = [
      ['no key', null],
      ['mistyped key', 'sk_notarealkey000000000000000000000'],
      ['revoked key', server.revokedKey],
      ['expired key', server.expiredKey],
    ];
    for (const [label, key] of cases) {
      const client = await connect(`${server.url}/mcp`, key);
      for (const call of CALLS) {
        const result = await client.callTool(call.tool, call.args);
        t.equal(result.isError, true, `${label}: ${call.tool}`);
        t.equal(textOf(result), refusal(call.tool, 'unauthorized', ERROR_TABLE.unauthorized.message));
      }
      // The key is checked before the arguments, as on REST.
      const bad = await client.callTool('lookup_ip', { ip: '1.2.3.0/24' });
      t.equal(textOf(bad), refusal('lookup_ip', 'unauthorized', ERROR_TABLE.unauthorized.message), label);
      await client.close();
    }
  });

  t.test(`${name}: a key in the URL is refused`, async (t) => {
    const client = await connect(`${server.url}/mcp?api_key=${server.key}`, server.key);
    t.teardown(() => client.close());
    const result = await client.callTool('lookup_ip', { ip: '104.16.132.229' });
    t.equal(result.isError, true);
    t.match(
      textOf(result),
      /^Error executing tool lookup_ip: unauthorized: API keys are not accepted in the URL/,
    );
  });

  t.test(`${name}: invalid arguments get the REST error code and message`, async (t) => {
    const client = await connect(`${server.url}/mcp`, server.key);
    t.teardown(() => client.close());
    const cases: Array<{ tool: string; args: Record<string, unknown>; code: string; rest?: string }> = [
      { tool: 'lookup_ip', args: { ip: '1.2.3.0/24' }, code: 'invalid_ip', rest: '/v1/ip/1.2.3.0%2F24' },
      { tool: 'lookup_ip', args: { ip: 'example.com' }, code: 'invalid_ip', rest: '/v1/ip/example.com' },
      { tool: 'lookup_ip', args: {}, code: 'invalid_ip' },
      { tool: 'lookup_ip', args: { ip: 42 }, code: 'invalid_ip' },
      {
        tool: 'ip_domains',
        args: { ip: '10.0.0.1' },
        code: 'non_public_ip',
        rest: '/v1/ip/10.0.0.1/domains',
      },
      {
        tool: 'domain_history',
        args: { domain: 'http://example.com/x' },
        code: 'invalid_domain',
        rest: '/v1/domain/http%3A%2F%2Fexample.com%2Fx/history',
      },
      {
        tool: 'domain_hosting',
        args: { domain: 'localhost' },
        code: 'invalid_domain',
        rest: '/v1/domain/localhost/hosting',
      },
      { tool: 'lookup_asn', args: { asn: 'ASX' }, code: 'invalid_asn', rest: '/v1/asn/ASX' },
      { tool: 'lookup_asn', args: { asn: 0 }, code: 'invalid_asn', rest: '/v1/asn/0' },
      {
        tool: 'domain_history',
        args: { domain: 'example.com', cursor: 'not-a-cursor' },
        code: 'invalid_cursor',
        rest: '/v1/domain/example.com/history?cursor=not-a-cursor',
      },
      { tool: 'ip_domains', args: { ip: '104.16.132.229', limit: 5000 }, code: 'invalid_arguments' },
      { tool: 'lookup_asn', args: { asn: 13335, limit: 0 }, code: 'invalid_arguments' },
      { tool: 'lookup_asn', args: { asn: 13335, cursor: 'x'.repeat(1025) }, code: 'invalid_arguments' },
      { tool: 'ip_domains', args: { ip: '104.16.132.229', include_ended: 'yes' }, code: 'invalid_arguments' },
    ];
    for (const c of cases) {
      const result = await client.callTool(c.tool, c.args);
      t.equal(result.isError, true, `${c.tool} ${JSON.stringify(c.args).slice(0, 80)}`);
      const text = textOf(result);
      t.match(text, new RegExp(`^Error executing tool ${c.tool}: ${c.code}: .+`), text);
      if (c.rest) {
        const rest = await server.get(c.rest);
        const body = rest.json() as { error: string; message: string };
        t.equal(body.error, c.code, c.rest);
        t.equal(text, refusal(c.tool, body.error, body.message), `same message as ${c.rest}`);
      }
    }
    t.equal(
      textOf(await client.callTool('ip_domains', { ip: '104.16.132.229', limit: 5000 })),
      refusal('ip_domains', 'invalid_arguments', 'limit: should be at most 1000'),
    );
  });
}
