/**
 * The bare node:http baseline of the benches (test/bench/bare-http-server.ts, compiled): it sends
 * the captured bytes for a GET by its path and for a POST by its body, read to its end.
 */
import t from 'tap';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { request } from 'undici';
import { startListening } from './helpers/bench-process.js';
import { ROOT } from './helpers/demo-release.js';
import { capturedLine } from './bench/captured.js';

/** POSTs `parts` one write each, so that the body may arrive in more than one piece. */
function post(port: number, parts: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const length = parts.reduce((n, p) => n + Buffer.byteLength(p), 0);
    const req = http.request(
      { port, host: '127.0.0.1', method: 'POST', path: '/mcp', headers: { 'content-length': length } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.flushHeaders();
    for (const part of parts.slice(0, -1)) req.write(part);
    setTimeout(() => req.end(parts.at(-1)), 20);
  });
}

t.test('answers a GET by path and a POST by body', async (t) => {
  const server = path.join(ROOT, 'dist/test/bench/bare-http-server.js');
  t.ok(fs.existsSync(server), 'dist/test/bench/bare-http-server.js exists (run npm run build)');
  const dir = t.testdir({});
  const file = path.join(dir, 'responses.ndjson');
  const json = { 'content-type': 'application/json' };
  fs.writeFileSync(
    file,
    capturedLine(
      'GET',
      '/v1/ip/192.0.2.1',
      200,
      { ...json, 'x-ratelimit-limit': '60', date: 'x' },
      '{"ip":1}',
    ) +
      capturedLine('POST', '/mcp', 200, json, '{"id":1,"é":"ü"}', '{"id":1}') +
      capturedLine('POST', '/mcp', 200, json, '{"id":2}', '{"id":2}'),
  );
  const port = await startListening(t, server, [file]);

  const get = await request(`http://127.0.0.1:${port}/v1/ip/192.0.2.1`);
  t.equal(get.statusCode, 200);
  t.equal(await get.body.text(), '{"ip":1}');
  t.equal(get.headers['x-ratelimit-limit'], '60', 'captured headers sent again');
  t.equal(get.headers['content-length'], '8');
  t.not(get.headers.date, 'x', 'Date is node:http’s own, not the captured one');

  t.same(await post(port, ['{"id":2}']), { status: 200, body: '{"id":2}' });
  t.same(await post(port, ['{"i', 'd":1}']), { status: 200, body: '{"id":1,"é":"ü"}' }, 'body in two pieces');
  t.equal((await post(port, ['{"id":3}'])).status, 404, 'a body not captured');
  const missing = await request(`http://127.0.0.1:${port}/v1/ip/192.0.2.2`);
  t.equal(missing.statusCode, 404);
  await missing.body.dump();
});
