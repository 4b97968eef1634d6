/**
 * The raw `net` side of the MMDB peer section (test/bench/raw-net-server.ts, compiled): for a GET
 * it sends the same bytes as the bare node:http server of the same captured file (but the Date's
 * value), on a keep-alive connection, for requests that arrive in pieces or several in one write.
 */
import t from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startListening } from './helpers/bench-process.js';
import { ROOT } from './helpers/demo-release.js';
import { capturedLine } from './bench/captured.js';

/** Writes `parts` one after the other on one connection; resolves with what came back once `until` says it is all there. */
function exchange(port: number, parts: string[], until: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (until(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
    socket.on('connect', async () => {
      for (const part of parts) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, 20));
      }
    });
  });
}

const withoutDate = (text: string) => text.replace(/\r\nDate: [^\r]*\r\n/g, '\r\nDate: -\r\n');
const responses = (text: string) => text.split('HTTP/1.1 ').length - 1;

t.test('sends the bare server’s bytes', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'responses.ndjson');
  const headers = { 'content-type': 'application/json', 'x-ratelimit-limit': '60', 'x-request-id': 'r1' };
  fs.writeFileSync(
    file,
    capturedLine('GET', '/v1/ip/192.0.2.1', 200, headers, '{"ip":"192.0.2.1","é":1}') +
      capturedLine('GET', '/v1/ip/192.0.2.2', 404, headers, '{"detail":"Not Found"}'),
  );
  const raw = await startListening(t, path.join(ROOT, 'dist/test/bench/raw-net-server.js'), [file]);
  const bare = await startListening(t, path.join(ROOT, 'dist/test/bench/bare-http-server.js'), [file]);

  const get = (p: string) => `GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`;
  for (const p of ['/v1/ip/192.0.2.1', '/v1/ip/192.0.2.2']) {
    const done = (text: string) => /\r\n\r\n[^]*\}$/.test(text);
    const a = await exchange(raw, [get(p)], done);
    const b = await exchange(bare, [get(p)], done);
    t.equal(withoutDate(a), withoutDate(b), `${p}: the same bytes, but the date`);
  }
  const first = await exchange(raw, [get('/v1/ip/192.0.2.1')], (x) => x.endsWith('}'));
  t.match(first, /^HTTP\/1\.1 200 OK\r\n/);
  t.match(first, /\r\ncontent-length: 25\r\n/, 'the body’s length in bytes');

  const two = await exchange(
    raw,
    [get('/v1/ip/192.0.2.1') + get('/v1/ip/192.0.2.2')],
    (x) => responses(x) === 2 && x.endsWith('}'),
  );
  t.equal(responses(two), 2, 'two requests in one write: two responses');
  t.match(two, /^HTTP\/1\.1 200 OK[^]*HTTP\/1\.1 404 Not Found/, 'in order');

  const pieces = await exchange(raw, ['GET /v1/ip/192.0.2.1 HT', 'TP/1.1\r\nHost: x\r', '\n\r\n'], (x) =>
    x.endsWith('}'),
  );
  t.match(pieces, /^HTTP\/1\.1 200 OK\r\n/, 'a request in three pieces');
  const unknown = await exchange(raw, [get('/nowhere')], (x) => x.includes('\r\n\r\n'));
  t.match(unknown, /^HTTP\/1\.1 404 Not Found\r\ncontent-length: 0\r\n/, 'a path not captured');
});
