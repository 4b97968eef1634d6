/**
 * The MMDB peer of `make bench-api` (test/bench/mmdb-peer-server.ts, compiled, issue 35) on the
 * demo release's `builder export mmdb`: its answer is the record Debian's mmdblookup (libmaxminddb)
 * prints for the same address in the same file, byte for byte as JSON; the section's addresses
 * (test/bench/public-addresses.ts); and the bench's flags for the peer section
 * (test/bench/bench-api-args.ts).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { copyDemoRelease, ROOT } from './helpers/demo-release.js';
import { MMDBLOOKUP, parseMmdblookup } from './helpers/mmdb-check.js';
import { parseBenchApiArgs, PEER_ROUNDS } from './bench/bench-api-args.js';
import { startNode, stop } from './bench/processes.js';
import { PEER_ADDRESSES, randomPublicIpv4 } from './bench/public-addresses.js';

t.test('the peer answers the record mmdblookup prints, as JSON', async (t) => {
  // The compiled program, as the bench starts it (tap runs this file from its .ts source).
  const server = path.join(ROOT, 'dist/test/bench/mmdb-peer-server.js');
  t.ok(fs.existsSync(server), 'dist/test/bench/mmdb-peer-server.js exists (run npm run build)');
  const dir = t.testdir({});
  const { releasesDir } = copyDemoRelease(path.join(dir, 'releases'));
  const file = path.join(dir, 'demo.mmdb');
  const exported = spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin/builder.js'), '--releases-dir', releasesDir, 'export', 'mmdb', '--out', file],
    { encoding: 'utf8' },
  );
  t.equal(exported.status, 0, `export exits 0: ${exported.stderr}`);
  const peer = await startNode([server, file], undefined);
  t.teardown(() => stop(peer.child));
  const get = async (p: string) => {
    const r = await request(`http://127.0.0.1:${peer.port}${p}`);
    return { status: r.statusCode, type: r.headers['content-type'], body: await r.body.text() };
  };
  const printed = (ip: string) => {
    const r = spawnSync(MMDBLOOKUP, ['--file', file, '--ip', ip], { encoding: 'utf8' });
    return JSON.stringify(parseMmdblookup(r.stdout + r.stderr));
  };

  const known = await get('/v1/ip/24.144.76.1');
  t.equal(known.status, 200);
  t.equal(known.type, 'application/json');
  t.equal(known.body, printed('24.144.76.1'), 'the same bytes as mmdblookup’s record, as JSON');
  t.equal(
    known.body,
    '{"autonomous_system_number":14061,"autonomous_system_organization":"DigitalOcean, LLC",' +
      '"asn":{"number":14061,"route":"24.144.76.0/22","name":"DigitalOcean, LLC","category":"hosting"},' +
      '"provider":"DigitalOcean","prefix":"24.144.76.0/22","is_datacenter":true}',
  );
  const v6 = await get('/v1/ip/2606:4700::1');
  t.equal(v6.body, printed('2606:4700::1'), 'an IPv6 address too');
  t.match(v6.body, /^\{.*"provider":"Cloudflare"/);

  const bogon = await get('/v1/ip/10.0.0.1');
  t.same(bogon, { status: 200, type: 'application/json', body: 'null' }, 'no record: null');
  t.equal(printed('10.0.0.1'), 'null', 'mmdblookup finds no entry either');
  t.equal((await get('/v1/ip/not-an-ip')).status, 404);
  t.equal((await get('/v1/domain/example.com')).status, 404);
});

t.test('the peer section asks uniform random public IPv4 addresses, the same ones every run', async (t) => {
  const ips = randomPublicIpv4(PEER_ADDRESSES);
  t.equal(PEER_ADDRESSES, 100_000, "the issue's 100,000");
  t.equal(ips.length, 100_000);
  t.equal(new Set(ips).size, 100_000, 'all distinct');
  t.same(ips.slice(0, 5), [
    '1.232.125.26',
    '129.101.46.172',
    '184.211.168.193',
    '100.198.17.54',
    '72.199.218.206',
  ]);
  t.same(randomPublicIpv4(5), ips.slice(0, 5), 'the same list again');
  t.not(randomPublicIpv4(5, 36)[0], ips[0], 'another seed, another list');
  // An oracle of its own: IANA's IPv4 special-purpose blocks that are not globally reachable, and
  // multicast and reserved space, written out here (not shared/bogons.ts's table).
  const blocks = [
    '0.0.0.0/8',
    '10.0.0.0/8',
    '100.64.0.0/10',
    '127.0.0.0/8',
    '169.254.0.0/16',
    '172.16.0.0/12',
    '192.0.0.0/24',
    '192.0.2.0/24',
    '192.168.0.0/16',
    '198.18.0.0/15',
    '198.51.100.0/24',
    '203.0.113.0/24',
    '224.0.0.0/4',
    '240.0.0.0/4',
  ].map((cidr) => {
    const [base, bits] = cidr.split('/');
    const value = base!.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
    return { cidr, first: value, size: 2 ** (32 - Number(bits)) };
  });
  const numbers = ips.map((ip) => ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0));
  const inside = numbers.filter((n) => blocks.some((b) => n >= b.first && n < b.first + b.size));
  // 192.0.0.9 and 192.0.0.10 are globally reachable inside 192.0.0.0/24 (none drawn here).
  t.same(inside, [], 'none in a special-purpose, multicast or reserved block');
  // Uniform: each /1 half of the space holds about half of them (the private and reserved blocks
  // lie mostly in the upper half: 224.0.0.0/3 alone is an eighth of the space).
  const lower = numbers.filter((n) => n < 2 ** 31).length;
  t.ok(lower > 54_000 && lower < 58_000, `${lower} of 100,000 in 0.0.0.0/1`);
});

t.test('bench-api flags of the peer section', async (t) => {
  const dir = t.testdir({ 'peer.mmdb': 'x' });
  const parse = (...argv: string[]) => parseBenchApiArgs(argv, {}, '/repo');
  const defaults = parse();
  t.same(
    {
      skipPeer: defaults.skipPeer,
      onlyPeer: defaults.onlyPeer,
      peerRounds: defaults.peerRounds,
      peerAddresses: defaults.peerAddresses,
      mmdb: defaults.mmdb,
      releasesDir: defaults.releasesDir,
      runs: defaults.runs,
    },
    {
      skipPeer: false,
      onlyPeer: false,
      peerRounds: 3,
      peerAddresses: 100_000,
      mmdb: undefined,
      releasesDir: '/repo/var/bench/releases',
      runs: 3,
    },
  );
  t.equal(PEER_ROUNDS, 3);
  t.equal(parse('--skip-peer').skipPeer, true);
  const only = parse('--only-peer', '--peer-rounds', '5', '--mmdb', path.join(dir, 'peer.mmdb'));
  t.same(
    { onlyPeer: only.onlyPeer, peerRounds: only.peerRounds, mmdb: only.mmdb },
    { onlyPeer: true, peerRounds: 5, mmdb: path.join(dir, 'peer.mmdb') },
  );
  t.equal(parseBenchApiArgs([], { RUNS: '2', SECONDS_PER_RUN: '4' }, '/repo').seconds, 4, 'SECONDS_PER_RUN');

  t.throws(() => parse('--skip-peer', '--only-peer'), {
    message: '--skip-peer and --only-peer: one or the other',
  });
  t.throws(() => parse('--only-peer', '--only-workers'), {
    message: '--only-peer with --only-metering or --only-workers: one section at a time',
  });
  t.throws(() => parse('--mmdb', path.join(dir, 'missing.mmdb')), {
    message: `--mmdb ${path.join(dir, 'missing.mmdb')}: no such file (builder export mmdb --out FILE writes one)`,
  });
  t.throws(() => parse('--mmdb', dir), { message: /^--mmdb .*: no such file/ }, 'a directory is no file');
  t.throws(() => parse('--skip-peer', '--mmdb', path.join(dir, 'peer.mmdb')), {
    message: '--mmdb is for the peer section, which --skip-peer leaves out',
  });
  t.throws(() => parse('--peer-rounds', '0'), { message: '--peer-rounds 0: a whole number of at least 1' });
  t.throws(() => parse('--peer-rounds', '1.5'), {
    message: '--peer-rounds 1.5: a whole number of at least 1',
  });
  t.equal(parse('--peer-addresses', '2000').peerAddresses, 2000);
  t.throws(() => parse('--peer-addresses', '0'), {
    message: '--peer-addresses 0: a whole number of at least 1',
  });
  t.throws(() => parse('--peer'), { code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION' }, 'an unknown flag');
  t.throws(() => parse('--workers', '1,x'), { message: '--workers 1,x: worker counts, e.g. 1,2,4,8' });
});
