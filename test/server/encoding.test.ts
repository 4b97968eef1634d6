/**
 * The server's encodings of the query layer's answers (server/encoding/): JSON in parts with the
 * release blocks encoded once per release, the lookup_ip answers kept per release, and the MCP
 * result bytes the fast path writes, checked against the SDK's.
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { domainHistory, lookupAsn, lookupIp, openRelease } from '../../shared/queries/index.js';
import { operationById } from '../../shared/operations.js';
import { answerOf } from '../../server/call/answer-cache.js';
import {
  escapedJsonHead,
  jsonByteLength,
  jsonText,
  responseJson,
  responseParts,
} from '../../server/encoding/json.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { SERVER_INFO, checkAgainstSdk, toolResultChunks } from '../../server/encoding/mcp-result.js';
import { chunksBuffer } from '../../server/encoding/chunks.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'encoding-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const demo = copyDemoRelease(path.join(work, 'releases'));
const release = openRelease(path.join(demo.releasesDir, demo.file));
t.teardown(() => release.close());

t.test('responseJson writes exactly the bytes JSON.stringify writes', async (t) => {
  for (const response of [
    lookupIp(release, { ip: '104.16.132.229' }),
    lookupIp(release, { ip: '10.0.0.1' }),
    domainHistory(release, { domain: 'news.example', limit: 2 }),
    lookupAsn(release, { asn: '13335', limit: 2 }),
    lookupAsn(release, { asn: '553', limit: 2 }), // "BelWü": a head with a two-byte character
    { ok: true },
  ]) {
    t.equal(responseJson(response), JSON.stringify(response), 'the same text, byte for byte');
    // The parts (head, then the release's blocks) join into the text, its size and its escaping.
    const parts = responseParts(response);
    const text = jsonText(parts);
    t.equal(text, JSON.stringify(response));
    t.equal(jsonByteLength(parts), Buffer.byteLength(text));
    t.equal(escapedJsonHead(parts) + (parts.blocks?.escaped ?? ''), JSON.stringify(text));
    t.equal(parts.blocks === null, !('coverage' in response));
  }
});

t.test(
  'lookup_ip admission: 3,000 addresses asked in turn, twice: each kept on its second request',
  async (t) => {
    // Addresses that share a slot of a one-slot-per-hash filter would push each other out for ever.
    const own = openRelease(path.join(demo.releasesDir, demo.file));
    t.teardown(() => own.close());
    const op = operationById('lookup_ip')!;
    const context = { release: own, pageSize: (n: number) => n };
    const ips = Array.from({ length: 3000 }, (_, i) => `203.${(i >> 8) & 255}.${i & 255}.${(i * 7) & 255}`);
    const firstPass = ips.filter((ip) => answerOf(op, { ip }, context).kept === true).length;
    const secondPass = ips.filter((ip) => answerOf(op, { ip }, context).kept === true).length;
    t.ok(firstPass < 90, `at most 3 % kept on their first request (${firstPass})`);
    t.equal(secondPass, 3000, 'every one kept on its second');
  },
);

t.test('lookup_ip answers asked twice are kept, as UTF-8, and served again', async (t) => {
  // A fresh release object: the answer cache is per release.
  const own = openRelease(path.join(demo.releasesDir, demo.file));
  t.teardown(() => own.close());
  const op = operationById('lookup_ip')!;
  const context = { release: own, pageSize: (n: number) => n };
  for (const ip of ['104.16.132.229', '2606:4700::6810:84e5', '10.0.0.1']) {
    const expected = JSON.stringify(lookupIp(own, { ip }));
    const first = answerOf(op, { ip }, context);
    t.equal(typeof first.json.head, 'string', `${ip}: asked once, not kept`);
    const second = answerOf(op, { ip }, context);
    t.ok(Buffer.isBuffer(second.json.head), `${ip}: asked twice, kept as bytes`);
    t.equal(second.kept, true);
    const third = answerOf(op, { ip }, context);
    t.equal(third, second, `${ip}: the kept answer is served`);
    for (const answer of [first, second]) {
      t.equal(jsonText(answer.json), expected);
      t.equal(jsonByteLength(answer.json), Buffer.byteLength(expected));
      t.equal(escapedJsonHead(answer.json) + (answer.json.blocks?.escaped ?? ''), JSON.stringify(expected));
      t.equal(answer.billable, ip !== '10.0.0.1', 'a bogon is not counted');
      t.equal(answer.json.blocks === null, ip === '10.0.0.1');
    }
    const withValue = answerOf(op, { ip }, context, true);
    t.same(withValue.value, JSON.parse(expected), `${ip}: the object when asked for it`);
    t.notOk(withValue.kept, 'never a kept answer');
  }
});

t.test(
  "the MCP fast call's bytes are the SDK's, answers and refusals, in every version it serves",
  async (t) => {
    const proven = await checkAgainstSdk();
    t.same(proven.problems, [], 'no version left out');
    t.equal(proven.modern, true, '2026-07-28');
    t.same(
      [...proven.legacyVersions].sort(),
      [...SUPPORTED_PROTOCOL_VERSIONS].sort(),
      'every 2025-era version',
    );
  },
);

t.test(
  'a tools/call result in pieces: the JSON-RPC text, fresh, kept and without blocks, both eras',
  async (t) => {
    const expected = (value: object, id: string | number, modern: boolean) =>
      JSON.stringify({
        result: {
          content: [{ type: 'text', text: JSON.stringify(value) }],
          structuredContent: value,
          ...(modern && {
            resultType: 'complete',
            _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
          }),
        },
        jsonrpc: '2.0',
        id,
      });
    for (const value of [
      lookupIp(release, { ip: '104.16.132.229' }),
      lookupIp(release, { ip: '10.0.0.1' }), // a bogon: no release blocks
      lookupAsn(release, { asn: '553', limit: 2 }), // a two-byte character in the head
    ]) {
      const json = responseParts(value);
      const kept = {
        json: { head: Buffer.from(json.head as string), blocks: json.blocks },
        billable: true,
        kept: true,
      };
      for (const modern of [true, false]) {
        for (const id of [7, 'call-"1"', -0]) {
          const want = expected(value, id, modern);
          const fresh = toolResultChunks({ json, billable: true }, id, modern);
          t.equal(chunksBuffer(fresh).toString(), want);
          t.equal(fresh.length, json.blocks === null ? 1 : 5, 'one piece without blocks, five with');
          t.equal(typeof fresh[0], 'string', 'the first piece a string: written with the headers');
          // A kept answer: its start made once, then taken from the cache.
          t.equal(chunksBuffer(toolResultChunks(kept, id, modern)).toString(), want);
          t.equal(chunksBuffer(toolResultChunks(kept, id, modern)).toString(), want);
        }
      }
    }
  },
);

t.test('lookup_asn: large first pages are kept per page size and served again', async (t) => {
  const own = openRelease(path.join(demo.releasesDir, demo.file));
  t.teardown(() => own.close());
  const op = operationById('lookup_asn')!;
  // The demo's largest AS has 8 ranges: a plan with pages of 4 makes its first page a full one.
  const pages = (size: number) => ({ release: own, pageSize: (n: number) => Math.min(n, size) });
  const expected = (asn: string, limit: number) => JSON.stringify(lookupAsn(own, { asn, limit }));
  const first = answerOf(op, { asn: '13335' }, pages(4));
  t.equal(first.kept, true, 'a full page is kept');
  t.ok(Buffer.isBuffer(first.json.head));
  t.equal(jsonText(first.json), expected('13335', 4));
  t.equal(answerOf(op, { asn: '13335' }, pages(4)), first, 'and served again');
  const smaller = answerOf(op, { asn: '13335' }, pages(2));
  t.not(smaller, first, 'another page size is another answer');
  t.equal(jsonText(smaller.json), expected('13335', 2));
  // A page with fewer ranges than both the page size and 16: computed each time.
  const few = answerOf(op, { asn: '14061' }, pages(4));
  t.notOk(few.kept);
  t.equal(jsonText(few.json), expected('14061', 4));
  t.not(answerOf(op, { asn: '14061' }, pages(4)), few);
  // The default page size (100): 8 ranges are fewer than 16.
  t.notOk(answerOf(op, { asn: '13335' }, pages(100)).kept);
  t.equal(jsonText(answerOf(op, { asn: '13335' }, pages(100)).json), expected('13335', 100));
  // A limit or a cursor asked for: never kept.
  t.notOk(answerOf(op, { asn: '13335', limit: 4 }, pages(4)).kept);
  const cursor = (lookupAsn(own, { asn: '13335', limit: 4 }) as { next_cursor: string }).next_cursor;
  const next = answerOf(op, { asn: '13335', cursor }, pages(4));
  t.notOk(next.kept);
  t.equal(jsonText(next.json), JSON.stringify(lookupAsn(own, { asn: '13335', limit: 4, cursor })));
  // The envelope sees the page size used, on a kept answer too.
  let used: number | undefined;
  answerOf(op, { asn: '13335' }, { release: own, pageSize: (n: number) => (used = Math.min(n, 4)) });
  t.equal(used, 4);
});
