/**
 * Issue 16, defect 1: a key anywhere in a URL, under any name, is refused (401 `unauthorized`) and
 * never logged. On the code before the fix, `GET /v1/ping?access_token=<key>` with a valid header
 * key answered 200 and its log line carried the key (only the five names of
 * docs/api.md#authentication were refused and redacted), so every case of the first subtest failed.
 */
import { Writable } from 'node:stream';
import t from 'tap';
import { request } from 'undici';
import { generateKey } from '../../accounts/api-key.js';
import { createServerLogger } from '../../server/observability/log.js';
import { redactUrl, urlCarriesKey } from '../../server/http/redact.js';
import { startTestServer } from '../helpers/test-server.js';

const KEY_IN_URL = /^API keys are not accepted in the URL/;

t.test('a key-shaped value under any name, in the path or encoded: 401, never logged', async (t) => {
  const s = await startTestServer(t);
  const secret = generateKey();
  const encoded = [...secret].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
  const urls = [
    ...[
      'access_token',
      'api-key',
      'access-token',
      'auth_token',
      'auth',
      'bearer',
      'x-api-key',
      'apiToken',
      'q',
      'api_key[]',
      'api_key%5B%5D',
    ].map((name) => `/v1/ping?${name}=${secret}`),
    `/v1/ping?${secret}`,
    `/v1/ping?x=1&note=Bearer+${secret}`,
    `/v1/ping?x=${encoded}`,
    `/v1/ip/8.8.8.8?cursor=${secret}`,
    `/v1/ip/${secret}`,
    `/v1/domain/${secret}.example.com/hosting`,
    `/v1/domain/a${secret}/history`,
    `/health?x=${secret}`,
    `/v1/openapi.json?x=${secret}`,
    `/llms-full.txt?x=${secret}`,
    `/no/such/path/${secret}`,
    // Without the refusal first, the trailing-slash redirect would echo the key in Location.
    `/v1/ping/?x=${secret}`,
  ];
  for (const url of urls) {
    const r = await s.get(url);
    t.equal(r.status, 401, url);
    t.equal(r.headers.location, undefined, `${url}: no redirect`);
    t.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/, `${url}: X-Request-ID`);
    const body = r.json() as { error: string; message: string };
    t.same(Object.keys(body).sort(), ['error', 'message']);
    t.equal(body.error, 'unauthorized');
    t.match(body.message, KEY_IN_URL);
  }
  const logs = s.logs.join('\n');
  t.notMatch(logs, secret, 'the key is in no log line');
  t.notMatch(logs, encoded, 'nor its percent-encoded form');
  const lines = s.logs.map((l) => JSON.parse(l) as { url?: string }).filter((l) => l.url !== undefined);
  t.equal(lines.length, urls.length, 'one request line per request');
  t.equal(lines[0]!.url, '/v1/ping?access_token=REDACTED');
  t.equal(lines.find((l) => l.url!.startsWith('/v1/ip/REDACTED'))?.url, '/v1/ip/REDACTED');
  t.equal(lines.find((l) => l.url!.includes('x=REDACTED'))?.url, '/v1/ping?x=REDACTED');
});

t.test('what is not shaped like a key still passes', async (t) => {
  const s = await startTestServer(t);
  for (const url of ['/v1/ping?q=sk_short', '/v1/ping?note=skunk_works_2026', '/health?x=sk_']) {
    const r = await s.get(url);
    t.equal(r.status, 200, url);
  }
});

t.test('POST /mcp with a key in the URL: the tool call is refused unauthorized', async (t) => {
  const s = await startTestServer(t);
  const r = await request(`${s.url}/mcp?access_token=${s.key}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
      authorization: `Bearer ${s.key}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'lookup_ip', arguments: { ip: '8.8.8.8' } },
    }),
  });
  t.equal(r.statusCode, 200);
  const body = (await r.body.json()) as { result: { isError: boolean; content: Array<{ text: string }> } };
  t.equal(body.result.isError, true);
  t.match(
    body.result.content[0]!.text,
    /^Error executing tool lookup_ip: unauthorized: API keys are not accepted/,
  );
  t.notMatch(s.logs.join('\n'), s.key);
});

t.test('urlCarriesKey and redactUrl', async (t) => {
  const key = generateKey();
  t.equal(urlCarriesKey(`/v1/ping?a=${key}`), true);
  t.equal(urlCarriesKey(`/v1/ping?a=${key.slice(0, 23)}`), true, 'prefix and 20 characters');
  t.equal(urlCarriesKey(`/v1/ping?a=${key.slice(0, 22)}`), false, 'prefix and 19 characters');
  t.equal(urlCarriesKey(`/v1/ping?a=%2573k_${key.slice(3)}`), true, 'encoded twice');
  t.equal(urlCarriesKey('/v1/ping?a=%zz'), false, 'malformed escapes are not an error');
  t.equal(redactUrl(`/v1/ping?api_key=x&b=${key}&c=1`), '/v1/ping?api_key=REDACTED&b=REDACTED&c=1');
  t.equal(redactUrl(`/v1/a/%73k_${key.slice(3)}/b?c`), '/v1/a/REDACTED/b?c');
  t.equal(redactUrl(`/v1/x?${key}=1`), '/v1/x?REDACTED=1');
});

t.test('the server logger redacts keys by value in any field', async (t) => {
  const lines: string[] = [];
  const logger = createServerLogger(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString('utf8'));
        callback();
      },
    }),
  );
  const key = generateKey();
  logger.info({ note: `header was Bearer ${key}`, nested: { list: [key] } }, `saw ${key}`);
  logger.error({ err: new Error(`bad domain ${key}.example`) }, 'failed');
  const all = lines.join('');
  t.notMatch(all, key);
  // note, the list item, the message, and the error's message and stack.
  t.equal((all.match(/REDACTED/g) ?? []).length, 5);
});
