/**
 * The operation table (shared/operations.ts) is the one declaration of the keyed operations: the
 * REST routes, the OpenAPI paths, the MCP tools and the `builder query` subcommands are exactly
 * its operations, nothing more and nothing less.
 */
import t from 'tap';
import { buildProgram } from '../../builder/cli.js';
import { OPERATIONS, TOOLS, routePath } from '../../shared/operations.js';
import { buildOpenApiDocument } from '../../server/api-docs/openapi.js';
import { startTestServer } from '../helpers/test-server.js';

/**
 * The GET routes of Fastify's printRoutes() tree: each line is a path piece under the line of the
 * level above (`├── /v1/ip/:ip (GET)` then `│   └── /domains (GET)`), 4 columns per level.
 */
function getRoutes(printed: string): string[] {
  const stack: string[] = [];
  const routes: string[] = [];
  for (const line of printed.split('\n')) {
    const m = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (m[3]?.split(', ').includes('GET')) routes.push(stack.join(''));
  }
  return routes;
}

/** The GET routes under /v1 the app serves with a key (every one but the description itself). */
function keyedRoutes(printed: string): string[] {
  return getRoutes(printed)
    .filter((p) => p.startsWith('/v1/') && p !== '/v1/openapi.json')
    .sort();
}

t.test('the REST routes are the operations of the table', async (t) => {
  const server = await startTestServer(t);
  const printed = server.app.printRoutes({ commonPrefix: false, method: 'GET' });
  t.same(keyedRoutes(printed), OPERATIONS.map(routePath).sort());
  for (const op of OPERATIONS) {
    t.ok(server.app.hasRoute({ method: 'GET', url: routePath(op) }), `GET ${op.path}`);
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
    ['lookup_ip', 'ip_domains', 'domain_history', 'domain_hosting', 'lookup_asn'],
    'the five lookups of docs/api.md#operations',
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
