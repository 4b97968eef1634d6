import t, { type Test } from 'tap';
import { canonicalIpv4, ValueNumbers } from '../../builder/release/dns-tables/value-numbers.js';
import { intervalsByValue } from '../../builder/release/dns-tables/intervals.js';
import { JsonArraysOfText } from '../../builder/release/dns-tables/json-arrays.js';
import { PackedText } from '../../builder/release/dns-tables/packed-text.js';
import { orderByBytes, sortAscii } from '../../builder/release/dns-tables/sort-ascii.js';
import Database from 'better-sqlite3';
import { summarizeIps } from '../../builder/release/dns-tables/ip-summaries.js';
import { writeDomains } from '../../builder/release/dns-tables/domains.js';
import { RELEASE_TABLES } from '../../shared/release-schema.js';

t.test('sortAscii sorts in byte order, as Array.prototype.sort does', async (t) => {
  const texts = [
    '',
    'a',
    'ab',
    'a',
    '1.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '10.0.0.1',
    '9.9.9.9',
    '::1',
    '2001:db8::1',
  ];
  let x = 7;
  for (let i = 0; i < 5000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    texts.push(
      i % 3 ? `${x % 256}.${(x >> 8) % 256}.${(x >> 16) % 10}.${i % 7}` : `2001:db8:${x.toString(16)}::${i}`,
    );
  }
  t.same(sortAscii([...texts]), [...texts].sort());
  const mixed = [...texts.slice(0, 200), 'é', 'z'];
  t.same(sortAscii([...mixed]), [...mixed].sort(), 'a non-ASCII text: the built-in sort');
});

t.test('orderByBytes: the texts of a PackedText in byte order (SQLite BINARY), UTF-8 included', async (t) => {
  const names = ['b.example', 'a.example', 'www.a.example', 'é.example', 'a', 'a.example.', 'z', 'ä.example'];
  let x = 11;
  for (let i = 0; i < 3000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    names.push(
      `${x.toString(36)}${i % 5 ? '' : 'ü'}.${['com', 'net', 'example'][i % 3]!}`,
      `www.${x % 977}.com`,
    );
  }
  const order = orderByBytes(PackedText.of(names));
  const db = new Database(':memory:');
  db.exec(`CREATE TABLE n (i INTEGER PRIMARY KEY, name TEXT NOT NULL)`);
  const insert = db.prepare(`INSERT INTO n (i, name) VALUES (?, ?)`);
  names.forEach((name, i) => insert.run(i, name));
  // Ties (the same name twice) keep no particular order: compared as names.
  const expected = db.prepare(`SELECT name FROM n ORDER BY name`).pluck().all();
  t.same(
    Array.from(order, (i) => names[i]),
    expected,
  );
  t.same(
    Array.from(order.slice(0, 5), (i) => names[i]),
    ['11br0g.example', '11ctfkü.com', '11vsw0.com', '11wmwwü.net', '12xkao.net'],
  );
  t.same(
    Array.from(order.slice(-2), (i) => names[i]),
    ['ä.example', 'é.example'],
  );
  t.equal(new Set(order).size, names.length, 'a permutation');
  db.close();
});

t.test('canonicalIpv4 accepts only canonical dotted quads', async (t) => {
  t.equal(canonicalIpv4('1.2.3.4', 0, 7), 0x01020304);
  t.equal(canonicalIpv4('255.255.255.255', 0, 15), 4294967295);
  t.equal(canonicalIpv4('0.0.0.0', 0, 7), 0);
  t.equal(canonicalIpv4('x10.0.0.1y', 1, 9), 0x0a000001);
  for (const text of [
    '01.2.3.4',
    '1.2.3.04',
    '256.1.1.1',
    '1.2.3',
    '1.2.3.4.5',
    '1..3.4',
    '1.2.3.',
    '',
    '::1',
    '1.2.3.4 ',
  ])
    t.equal(canonicalIpv4(text, 0, text.length), -1, text);
});

t.test('ValueNumbers and JsonArraysOfText number each text once, in first-seen order', async (t) => {
  const numbers = new ValueNumbers();
  const text =
    '["1.2.3.4","::1"],["1.2.3.4","01.2.3.4"], [ "::1" ,"a\\"b"],[],["skipped"],["255.255.255.255"]';
  const arrays = new JsonArraysOfText(text);
  t.same([...arrays.next(numbers)], [0, 1]);
  t.same([...arrays.next(numbers)], [0, 2]);
  t.same([...arrays.next(numbers)], [1, 3]);
  t.same([...arrays.next(numbers)], []);
  t.same([...arrays.next(null)], []);
  t.same([...arrays.next(numbers)], [4]);
  arrays.end();
  t.equal(numbers.of('1.2.3.4'), 0);
  t.equal(numbers.of('a"b'), 3);
  t.same(numbers.texts(), ['1.2.3.4', '::1', '01.2.3.4', 'a"b', '255.255.255.255']);
  // Many addresses: the table grows and keeps every number.
  const many = new ValueNumbers();
  for (let i = 0; i < 3_000_000; i += 3) many.of(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  t.equal(many.count, 1_000_000);
  t.equal(many.of('10.0.0.3'), 1);
  for (let i = 0; i < 300_000; i++) many.of(`2001:db8::${i.toString(16)}`);
  t.equal(many.count, 1_300_000);
  t.equal(many.of('2001:db8::ff'), 1_000_255);
  t.equal(many.texts()[1_000_255], '2001:db8::ff');
  t.throws(() => new JsonArraysOfText('["a').next(numbers), /end of a string/);
  t.throws(() => new JsonArraysOfText('["a"]x').end(), /expected the end/);
});

t.test('summarizeIps: per address the current domains, a sample of 10 names and the time span', async (t) => {
  // 12 domains (ids 1..12) on address 0, currently; domain 3 also ended on address 1; address 2
  // has only an ended interval. Rows in release order (domain id, then first_observed).
  const rows: Array<[number, number, number, number, number]> = []; // domain, value, first, last, ended
  for (let d = 1; d <= 12; d++) {
    if (d === 3) rows.push([3, 1, 50, 60, 70]);
    rows.push([d, 0, 100 + d, 200 + d, NaN]);
  }
  rows.push([12, 2, 5, 6, 7]);
  const iv = {
    count: rows.length,
    domain: Int32Array.from(rows.map((r) => r[0])),
    value: Int32Array.from(rows.map((r) => r[1])),
    aaaa: new Uint8Array(rows.length),
    first: Float64Array.from(rows.map((r) => r[2])),
    last: Float64Array.from(rows.map((r) => r[3])),
    ended: Float64Array.from(rows.map((r) => r[4])),
  };
  const byValue = intervalsByValue(iv, 3);
  const summarize = (names: string[], from = 0, to = 3) =>
    summarizeIps(iv, byValue, from, to, PackedText.of(names), 1);
  const names = Array.from({ length: 12 }, (_, i) => `d${i + 1}.example`);
  const s = summarize(names);
  t.same([s.from, s.to], [0, 3]);
  t.same([...s.currentCount], [12, 0, 0]);
  t.same([...s.first], [101, 50, 5]);
  t.same([...s.last], [212, 60, 6]);
  const samples = Buffer.from(s.samples).toString('utf8').split('\n');
  t.same(samples, [JSON.stringify(names.slice(0, 10)), '[]', '[]']);
  // Names JSON.stringify escapes take the string path; the texts are the same.
  const odd = names.map((n, i) => (i === 1 ? 'quo"te.example' : i === 2 ? 'é.example' : n));
  const oddSamples = Buffer.from(summarize(odd).samples).toString('utf8').split('\n');
  t.same(oddSamples, [JSON.stringify(odd.slice(0, 10)), '[]', '[]']);
  // A chunk: addresses 1 and 2 only.
  const chunk = summarize(names, 1, 3);
  t.same([chunk.from, chunk.to], [1, 3]);
  t.same([...chunk.currentCount], [0, 0]);
  t.same([...chunk.first], [50, 5]);
  t.same([...chunk.last], [60, 6]);
  t.equal(Buffer.from(chunk.samples).toString('utf8'), '[]\n[]');
});

/** An empty release domain table with a state's seed and dns_name tables attached as `st`. */
function domainsDatabase(t: Test): Database.Database {
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  db.exec(`ATTACH DATABASE ':memory:' AS st`);
  db.exec(`CREATE TABLE st.seed (domain TEXT PRIMARY KEY, rank INTEGER NOT NULL) WITHOUT ROWID`);
  db.exec(`CREATE TABLE st.dns_name (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)`);
  db.exec(RELEASE_TABLES.domain);
  return db;
}

t.test(
  'writeDomains: a name both in the seed and the www. name of a seed name is written once, at its first place',
  async (t) => {
    const db = domainsDatabase(t);
    // www.a.example: in the seed at rank 1, before a.example (rank 2) and so before its www. name;
    // www.d.example: in the seed at rank 9, after d.example (rank 4): its place is d.example's www.
    db.exec(
      `INSERT INTO st.seed VALUES ('b.example', 1), ('www.a.example', 1), ('a.example', 2), ('d.example', 4), ('www.d.example', 9)`,
    );
    db.exec(`INSERT INTO st.dns_name VALUES (1, 'www.a.example'), (2, 'www.d.example')`);
    db.exec('BEGIN');
    t.same([...writeDomains(db)], [0, 2, 6]);
    t.same(db.prepare(`SELECT id, name, rank, in_seed FROM domain ORDER BY id`).raw().all(), [
      [1, 'b.example', 1, 1],
      [2, 'www.a.example', 1, 1],
      [3, 'www.b.example', 1, 1],
      [4, 'a.example', 2, 1],
      [5, 'd.example', 4, 1],
      [6, 'www.d.example', 4, 1],
    ]);
    t.throws(() => db.exec(`INSERT INTO domain (name, rank, in_seed) VALUES ('a.example', 5, 0)`), /UNIQUE/);
    db.exec('ROLLBACK');
  },
);

t.test('PackedText: byte lengths, copies and whether the texts are JSON-safe', async (t) => {
  const p = PackedText.of(['ab', '', 'xyz']);
  t.same([p.byteLength(0), p.byteLength(1), p.byteLength(2)], [2, 0, 3]);
  const target = new Uint8Array(8).fill(46);
  t.equal(p.copyTo(2, target, 1), 4);
  t.equal(Buffer.from(target).toString('latin1'), '.xyz....');
  t.equal(p.isJsonSafe(), true);
  t.equal(PackedText.of(['a\\b']).isJsonSafe(), false);
  t.equal(PackedText.of(['a"b']).isJsonSafe(), false);
  t.equal(PackedText.of(['a\tb']).isJsonSafe(), false);
  t.equal(PackedText.of(['é']).isJsonSafe(), false);
});

t.test('writeDomains: seed names in rank order (apex, then www.), then other observed names', async (t) => {
  const db = domainsDatabase(t);
  db.exec(`INSERT INTO st.seed VALUES ('b.example', 1), ('a.example', 2), ('www.c.example', 3)`);
  db.exec(`INSERT INTO st.dns_name VALUES (1, 'a.example'), (2, 'www.b.example'), (4, 'www.c.example')`);
  const ids = (map: Int32Array) => [...map];
  db.exec('BEGIN');
  t.same(ids(writeDomains(db)), [0, 3, 2, 0, 5], 'every observed name is a seed name: one lookup');
  t.same(db.prepare(`SELECT id, name, rank, in_seed FROM domain ORDER BY id`).raw().all(), [
    [1, 'b.example', 1, 1],
    [2, 'www.b.example', 1, 1],
    [3, 'a.example', 2, 1],
    [4, 'www.a.example', 2, 1],
    [5, 'www.c.example', 3, 1],
  ]);
  db.exec('ROLLBACK');
  db.exec(`INSERT INTO st.dns_name VALUES (5, 'z.example'), (6, 'y.example')`);
  db.exec('BEGIN');
  t.same(ids(writeDomains(db)), [0, 3, 2, 0, 5, 7, 6], 'names outside the seed come after it, by name');
  t.same(db.prepare(`SELECT id, name, rank, in_seed FROM domain WHERE id > 5 ORDER BY id`).raw().all(), [
    [6, 'y.example', null, 0],
    [7, 'z.example', null, 0],
  ]);
  db.exec('ROLLBACK');
});
