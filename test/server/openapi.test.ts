/** /v1/openapi.json is a valid OpenAPI 3.1 document of every operation; /llms-full.txt is served. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { buildOpenApiDocument } from '../../server/api-docs/openapi.js';
import { startTestServer } from '../helpers/test-server.js';

const REDOCLY = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../node_modules/.bin/redocly');

type Doc = {
  openapi: string;
  info: { version: string };
  paths: Record<
    string,
    {
      [method: string]: {
        operationId: string;
        parameters: Array<Record<string, unknown>>;
        responses: Record<string, unknown>;
        security: unknown[];
      };
    }
  >;
  components: {
    schemas: Record<string, unknown>;
    securitySchemes: Record<string, { type: string; scheme: string }>;
  };
};

/** Every GET also declares 308 (trailing slash) and `default` (refusals of the HTTP layer). */
const EXPECTED: Record<string, { method: string; statuses: string[]; query: string[] }> = {
  '/v1/ip/{ip}': {
    method: 'get',
    statuses: ['200', '308', '401', '402', '403', '422', '429', '500', '503', 'default'],
    query: ['as_of'],
  },
  '/v1/ip/{ip}/domains': {
    method: 'get',
    statuses: ['200', '308', '400', '401', '402', '403', '410', '422', '429', '500', '503', 'default'],
    query: ['include_ended', 'limit', 'cursor', 'from', 'to', 'strict', 'as_of'],
  },
  '/v1/domain/{domain}/history': {
    method: 'get',
    statuses: ['200', '308', '400', '401', '402', '403', '410', '422', '429', '500', '503', 'default'],
    query: ['limit', 'cursor', 'from', 'to', 'strict', 'as_of'],
  },
  '/v1/domain/{domain}/hosting': {
    method: 'get',
    statuses: ['200', '308', '401', '402', '403', '422', '429', '500', '503', 'default'],
    query: ['as_of'],
  },
  '/v1/asn/{asn}': {
    method: 'get',
    statuses: ['200', '308', '400', '401', '402', '403', '410', '422', '429', '500', '503', 'default'],
    query: ['limit', 'cursor', 'as_of'],
  },
  '/v1/changes': {
    method: 'get',
    statuses: ['200', '308', '400', '401', '402', '403', '422', '429', '500', '503', 'default'],
    query: ['since', 'kind', 'subject', 'limit', 'cursor'],
  },
  '/v1/ping': {
    method: 'get',
    statuses: ['200', '308', '401', '402', '403', '429', '500', '503', 'default'],
    query: [],
  },
  '/health': { method: 'get', statuses: ['200', '308', '401', '500', '503', 'default'], query: [] },
  '/v1/openapi.json': { method: 'get', statuses: ['200', '308', '401', '403', '500', 'default'], query: [] },
  '/llms-full.txt': { method: 'get', statuses: ['200', '308', '401', '500', 'default'], query: [] },
  '/mcp': {
    method: 'post',
    statuses: ['200', '202', '308', '400', '403', '406', '413', '415', '500', '503', 'default'],
    query: [],
  },
  ...Object.fromEntries(
    [
      'rrset/name/{name}',
      'rrset/name/{name}/{rrtype}',
      'rrset/name/{name}/{rrtype}/{bailiwick}',
      'rdata/ip/{rdata_ip}',
    ].map((tail) => [
      `/dnsdb/v2/lookup/${tail}`,
      {
        method: 'get',
        statuses: ['200', '308', '401', '402', '403', '422', '429', '500', '503', 'default'],
        query: [
          'limit',
          'offset',
          'time_first_before',
          'time_first_after',
          'time_last_before',
          'time_last_after',
        ],
      },
    ]),
  ),
  '/dnsdb/v2/ping': { method: 'get', statuses: ['200', '308', '401', '500', 'default'], query: [] },
  '/dnsdb/v2/rate_limit': {
    method: 'get',
    statuses: ['200', '308', '401', '402', '403', '429', '500', '503', 'default'],
    query: [],
  },
};

t.test('the document is valid OpenAPI 3.1 and describes every operation', async (t) => {
  const document = buildOpenApiDocument();
  const result = await new Validator().validate(document);
  const doc = document as unknown as Doc;
  t.same(result.errors, undefined, 'no validation errors');
  t.ok(result.valid, 'valid');
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.0.0');
  t.same(doc.components.securitySchemes.bearerAuth, {
    ...doc.components.securitySchemes.bearerAuth,
    type: 'http',
    scheme: 'bearer',
  });
  t.same(Object.keys(doc.paths).sort(), Object.keys(EXPECTED).sort());
  for (const [path, expected] of Object.entries(EXPECTED)) {
    const op = doc.paths[path]![expected.method]!;
    t.same(Object.keys(op.responses).sort(), [...expected.statuses].sort(), `${path} responses`);
    t.same(
      op.parameters.filter((p) => p.in === 'query').map((p) => p.name),
      expected.query,
      `${path} query parameters`,
    );
    for (const p of op.parameters.filter((p) => p.in === 'path')) t.equal(p.required, true);
    const security = ['/health', '/llms-full.txt', '/v1/openapi.json', '/dnsdb/v2/ping'].includes(path)
      ? []
      : path === '/mcp'
        ? [{}, { bearerAuth: [] }]
        : path.startsWith('/dnsdb/')
          ? [{ dnsdbKey: [] }]
          : [{ bearerAuth: [] }];
    t.same(op.security, security, `${path} security`);
  }
  const limit = doc.paths['/v1/asn/{asn}']!.get!.parameters.find((p) => p.name === 'limit')!;
  t.same(limit.schema, { default: 100, type: 'integer', minimum: 1, maximum: 1000 });
  t.equal(limit.required, false);
  const cursor = doc.paths['/v1/asn/{asn}']!.get!.parameters.find((p) => p.name === 'cursor')!;
  t.same(cursor.schema, { type: 'string', maxLength: 1024 });
  for (const id of [
    'IpLookup',
    'IpDomainsPage',
    'DomainHistoryPage',
    'DomainHosting',
    'AsnLookup',
    'Ping',
    'Health',
    'Error',
    'ValidationError',
    'Detail',
    'JsonRpcMessage',
    'JsonRpcResponse',
  ]) {
    t.ok(doc.components.schemas[id], `component ${id}`);
  }
});

t.test('served without a key; the guide is plain text', async (t) => {
  const s = await startTestServer(t);
  const r = await s.get('/v1/openapi.json', { key: null });
  t.equal(r.status, 200);
  t.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  t.same(r.json(), JSON.parse(JSON.stringify(buildOpenApiDocument())));
  t.ok(r.headers['x-request-id']);

  const guide = await s.get('/llms-full.txt', { key: null });
  t.equal(guide.status, 200);
  t.equal(guide.headers['content-type'], 'text/plain; charset=utf-8');
  for (const needle of [
    'Authorization: Bearer',
    'GET /v1/ip/{ip}',
    'GET /v1/ip/{ip}/domains',
    'GET /v1/domain/{domain}/history',
    'GET /v1/domain/{domain}/hosting',
    'GET /v1/asn/{asn}',
    'GET /v1/ping',
    'GET /health',
    'cursor_expired',
    'invalid_cursor',
    'observed: false',
    'is_datacenter',
    'stale_reason',
    'Retry-After',
    '/mcp',
  ]) {
    t.match(guide.text, needle, `guide mentions ${needle}`);
  }
  // This deployment's base URL and the size of its data, not placeholders (issue 16).
  t.notMatch(guide.text, /<base_url>|\{base_url\}|\{\{|1,000,000/);
  t.match(guide.text, `curl -H "Authorization: Bearer $IPSCOPE_KEY" ${s.url}/v1/ip/8.8.8.8`);
  t.match(guide.text, `MCP tools at POST ${s.url}/mcp`);
  t.match(
    guide.text,
    "- Names resolved: the 37 registered domains of this deployment's seed list (demo seed (reserved example domains)), plus 37 `www.` names. Other",
  );
});

t.test('redocly lint of the served document: 0 errors', async (t) => {
  const s = await startTestServer(t);
  const served = await s.get('/v1/openapi.json', { key: null });
  const file = path.join(t.testdir({}), 'openapi.json');
  fs.writeFileSync(file, served.text);
  const result = spawnSync(REDOCLY, ['lint', '--format=json', file], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number } };
  t.equal(report.totals.errors, 0, 'no errors');
  t.equal(result.status, 0, 'redocly exits 0');
  // The two left: components described for clients (404, 405 of any path), referenced by no operation.
  t.equal(report.totals.warnings, 2, 'warnings: the unused NotFound and MethodNotAllowed responses');
});
