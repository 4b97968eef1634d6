/**
 * The operation table (shared/operations.ts) is the one declaration of the keyed operations: the
 * REST routes, the OpenAPI paths, the MCP tools and the `builder query` subcommands are exactly
 * its operations, nothing more and nothing less.
 */
import t from 'tap';
import { buildProgram } from '../../builder/cli.js';
import { OPERATIONS, TOOLS } from '../../shared/operations.js';
import { buildOpenApiDocument } from '../../server/api-docs/openapi.js';
import { startTestServer } from '../helpers/test-server.js';

t.test('the REST routes are the operations of the table', async (t) => {
  const server = await startTestServer(t);
  // The GET routes under /v1 the app serves with a key (every one but the description itself).
  const keyed = server.app
    .routes()
    .filter((r) => r.method === 'GET' && r.path.startsWith('/v1/') && r.path !== '/v1/openapi.json');
  t.same(keyed.map((r) => r.path).sort(), OPERATIONS.map((op) => op.path).sort());
  t.ok(
    keyed.every((r) => r.access === 'key'),
    'each checks the key',
  );
  for (const op of OPERATIONS) {
    const r = await server.get(
      op.path.replace(
        /\{\w+\}/,
        op.pathParameter === 'asn' ? '13335' : op.pathParameter === 'domain' ? 'example.com' : '1.1.1.1',
      ),
    );
    t.equal(r.status, 200, `GET ${op.path} answered`);
  }
});

t.test('the OpenAPI paths under /v1 are the operations of the table', async (t) => {
  const doc = buildOpenApiDocument() as { paths: Record<string, { get: { operationId: string } }> };
  const keyed = Object.keys(doc.paths).filter((p) => p.startsWith('/v1/') && p !== '/v1/openapi.json');
  t.same(keyed.sort(), OPERATIONS.map((op) => op.path).sort());
  for (const op of OPERATIONS) t.equal(doc.paths[op.path]!.get.operationId, op.id, op.path);
});

t.test('the MCP tools are the operations of the table marked as tools', async (t) => {
  const server = await startTestServer(t);
  const response = await fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  const list = (await response.json()) as { result: { tools: Array<{ name: string; title?: string }> } };
  t.same(
    list.result.tools.map((tool) => tool.name),
    TOOLS.map((op) => op.id),
  );
  t.same(
    list.result.tools.map((tool) => tool.title),
    TOOLS.map((op) => op.title),
  );
  t.same(
    TOOLS.map((op) => op.id),
    ['lookup_ip', 'ip_domains', 'domain_history', 'domain_hosting', 'lookup_asn', 'list_changes'],
    'the five lookups of docs/api.md#operations and the change feed',
  );
});

t.test('the builder query subcommands are the operations of the table that have one', async (t) => {
  const query = buildProgram().commands.find((c) => c.name() === 'query')!;
  t.same(
    query.commands.map((c) => c.name()),
    OPERATIONS.filter((op) => op.command !== null).map((op) => op.command),
  );
  for (const op of OPERATIONS) {
    if (op.command === null) continue;
    const command = query.commands.find((c) => c.name() === op.command)!;
    t.same(
      command.options.map((o) => o.long).filter((flag) => flag !== '--release'),
      op.query.map((name) => `--${name.replace(/_/g, '-')}`),
      `${op.command}: one option per query parameter`,
    );
  }
});
