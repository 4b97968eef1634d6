/**
 * `builder query --file`: mixed and bad inputs on the demo release through the compiled CLI; every
 * NDJSON line is the query layer's answer (the API's) with the input echoed, CSV/TSV exact.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { operationById, runInRelease } from '../../shared/operations.js';
import { openRelease } from '../../shared/queries/index.js';
import { classifyInput, parseFieldPath, valueAt } from '../../builder/bulk.js';
import { copyDemoRelease, ROOT } from '../helpers/demo-release.js';

const INPUTS = [
  '# mixed inputs',
  '1.1.1.1',
  'AS13335',
  'example.com',
  '24.144.76.1',
  '108.177.2.5',
  '10.0.0.1',
  '::ffff:1.1.1.1',
  '1.2.3.4/24',
  '999.1.1.1',
  'bad_domain!',
  'AS0',
  '4294967296',
  'http://example.com/',
  '',
  '2606:4700:4700::1111',
];

const dir = t.testdir({});
const { releasesDir, file } = copyDemoRelease(path.join(dir, 'releases'));
const inputFile = path.join(dir, 'inputs.txt');
fs.writeFileSync(inputFile, `${INPUTS.join('\n')}\n`);

function builder(args: string[], input?: string) {
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin/builder.js'), '--releases-dir', releasesDir, 'query', ...args],
    { encoding: 'utf8', input },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('inputs are sent to the lookup that fits them', async (t) => {
  t.same(
    ['1.1.1.1', '::1', '1.2.3.4/24', 'AS13335', 'as64500', '15169', 'example.com', 'bad_domain!', 'a:b'].map(
      classifyInput,
    ),
    ['ip', 'ip', 'ip', 'asn', 'asn', 'asn', 'domain', 'domain', 'ip'],
  );
  t.same(parseFieldPath('provider_ranges[].metadata.bot'), ['provider_ranges', '[]', 'metadata', 'bot']);
  t.same(valueAt({ a: [{ b: 1 }, { b: null }, { b: 3 }] }, parseFieldPath('a[].b')), [1, 3]);
  t.throws(() => parseFieldPath('asn..asn'), /not a dotted path/);
});

t.test('NDJSON: one line per input, in order, each the API answer with the input echoed', async (t) => {
  const r = builder(['--file', '-'], `${INPUTS.join('\n')}\n`);
  t.equal(r.status, 1, 'some lines failed: exit status 1');
  t.equal(r.stderr, 'query: 6 of 14 inputs answered with an error\n');
  const lines = r.stdout.trimEnd().split('\n');
  const given = INPUTS.filter((l) => l !== '' && !l.startsWith('#'));
  t.equal(lines.length, given.length);
  const release = openRelease(path.join(releasesDir, file));
  t.teardown(() => release.close());
  const context = { release, pageSize: (n: number) => n };
  const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  parsed.forEach((line, i) => {
    const input = given[i]!;
    const kind = classifyInput(input);
    const op = operationById(kind === 'ip' ? 'lookup_ip' : kind === 'asn' ? 'lookup_asn' : 'domain_hosting')!;
    let expected: object;
    try {
      expected = runInRelease(op, { [op.pathParameter!]: input }, context);
    } catch (err) {
      expected = (err as { toBody(): object }).toBody();
    }
    t.same(line, { input, lookup: op.id, ...expected }, `line ${i + 1}: ${input}`);
  });
  // Exact values of the demo data.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers read as parsed JSON
  type Json = Record<string, any>;
  const [one, as, domain, ocean, crawler, bogon, mapped] = parsed as Json[];
  t.same(one!.asn, {
    asn: 13335,
    route: '1.1.1.0/24',
    descr: 'Cloudflare, Inc.',
    country: 'US',
    source: 'ip-location-db',
    category: 'cdn',
    category_source: 'own',
    network_role: 'content_network',
  });
  t.same(one!.domains.sample, ['resolver.example', 'www.resolver.example']);
  t.equal(as!.name, 'Cloudflare, Inc.');
  t.same(
    (domain!.hosting as Json[]).map((h) => [h.provider, h.category, h.current]),
    [
      ['AWS', 'cdn', true],
      ['AWS', 'cdn', true],
    ],
  );
  t.same([ocean!.provider, ocean!.prefix, ocean!.is_datacenter], ['DigitalOcean', '24.144.76.0/22', true]);
  t.same(crawler!.provider_ranges[0].metadata, { bot: 'Google special-case crawler', operator: 'Google' });
  t.same(bogon, {
    input: '10.0.0.1',
    lookup: 'lookup_ip',
    is_bogon: true,
    bogon: { prefix: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC 1918' },
  });
  t.equal(mapped!.ip, '1.1.1.1');
  t.same(parsed[7], {
    input: '1.2.3.4/24',
    lookup: 'lookup_ip',
    error: 'invalid_ip',
    message: '"1.2.3.4/24" is a range, not one address: send a single IPv4 or IPv6 address',
  });
  t.same(
    parsed.slice(8, 12).map((l) => [l.lookup, l.error]),
    [
      ['lookup_ip', 'invalid_ip'],
      ['domain_hosting', 'invalid_domain'],
      ['lookup_asn', 'invalid_asn'],
      ['lookup_asn', 'invalid_asn'],
    ],
  );
});

const FIELDS =
  'asn.asn,asn.descr,provider,is_datacenter,provider_ranges[].category,provider_ranges[].metadata.bot,domains.current_count,hosting[].provider';

t.test('CSV with --fields, from a gzipped file', async (t) => {
  const gz = path.join(dir, 'inputs.txt.gz');
  fs.writeFileSync(gz, zlib.gzipSync(fs.readFileSync(inputFile)));
  const r = builder(['--file', gz, '--format', 'csv', '--fields', FIELDS]);
  t.equal(r.status, 1);
  t.equal(
    r.stdout,
    [
      `input,${FIELDS},error`,
      '1.1.1.1,13335,"Cloudflare, Inc.",,,,,2,,',
      'AS13335,,,,,,,,,',
      'example.com,,,,,,,,AWS;AWS,',
      '24.144.76.1,14061,"DigitalOcean, LLC",DigitalOcean,true,hosting,,0,,',
      '108.177.2.5,,,,,crawler,Google special-case crawler,0,,',
      '10.0.0.1,,,,,,,,,',
      '::ffff:1.1.1.1,13335,"Cloudflare, Inc.",,,,,2,,',
      '1.2.3.4/24,,,,,,,,,invalid_ip',
      '999.1.1.1,,,,,,,,,invalid_ip',
      'bad_domain!,,,,,,,,,invalid_domain',
      'AS0,,,,,,,,,invalid_asn',
      '4294967296,,,,,,,,,invalid_asn',
      'http://example.com/,,,,,,,,,invalid_domain',
      '2606:4700:4700::1111,13335,"Cloudflare, Inc.",Cloudflare,,cdn,,2,,',
      '',
    ].join('\n'),
  );
});

t.test('TSV, domains answered by history, all good: exit status 0', async (t) => {
  const r = builder(
    [
      '--file',
      '-',
      '--format',
      'tsv',
      '--domains',
      'history',
      '--fields',
      'lookup,observed,current[].record_type',
    ],
    'example.com\nnot-in-seed.example\n1.1.1.1\n',
  );
  t.equal(r.status, 0);
  t.equal(r.stderr, '');
  t.equal(
    r.stdout,
    'input\tlookup\tobserved\tcurrent[].record_type\terror\n' +
      'example.com\tdomain_history\ttrue\tA;AAAA\t\n' +
      'not-in-seed.example\tdomain_history\tfalse\t\t\n' +
      '1.1.1.1\tlookup_ip\t\t\t\n',
  );
});

t.test('bad options are refused with a clear message', async (t) => {
  const csv = builder(['--file', inputFile, '--format', 'csv']);
  t.equal(csv.status, 2);
  t.equal(csv.stderr, 'builder: --format csv needs --fields (e.g. --fields asn.asn,provider)\n');
  const format = builder(['--file', inputFile, '--format', 'xml']);
  t.equal(format.stderr, 'builder: --format "xml": expected ndjson, csv or tsv\n');
  const missing = builder(['--file', path.join(dir, 'nope.txt')]);
  t.equal(missing.stderr, `builder: ${path.join(dir, 'nope.txt')}: no such file\n`);
});
