/**
 * `builder diff OLD NEW` between two demo releases of one state: the first after observation rounds
 * 1 and 2, the second after rounds 3 and 4 plus a new Cloudflare list (one range gone, one added)
 * and a new ip-location-db mapping (one route moved to another AS). Exact changes expected.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../helpers/demo-release.js';
import { EXPECTED_CHANGES } from './release-diff.expected.js';

t.test('diff between releases built from different observation rounds', async (t) => {
  const dir = t.testdir({});
  const stateDir = path.join(dir, 'state');
  const releasesDir = path.join(dir, 'releases');
  const env = { ...process.env, ASN_MAPPING: 'ip-location-db' };
  const run = (args: string[]) => {
    const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
    return r;
  };
  const builder = (...args: string[]) =>
    run([
      process.execPath,
      path.join(ROOT, 'bin/builder.js'),
      '--state-dir',
      stateDir,
      '--releases-dir',
      releasesDir,
      ...args,
    ]);
  const demo = (f: string) => path.join(ROOT, 'demo/data', f);
  const round = (n: number) => demo(`observations/round-${n}.ndjson`);
  run(['bash', path.join(ROOT, 'demo/import-feeds.sh'), stateDir, releasesDir]);
  builder('import', 'ip-location-db', demo('asn/asn-ipv4.csv'), demo('asn/asn-ipv6.csv'));
  builder('import', 'tranco', demo('seed.csv'));
  builder('import', 'observations', round(1), round(2));
  builder('release', '--demo');
  const first = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim().replace('.sqlite', '');

  // The next day: two more rounds, a changed Cloudflare list and a changed mapping.
  const feeds = path.join(ROOT, 'test/fixtures/feeds/cloudflare');
  const v4 = fs.readFileSync(path.join(feeds, 'ips-v4.txt'), 'utf8').replace('173.245.48.0/20\n', '');
  fs.writeFileSync(path.join(dir, 'ips-v4.txt'), `${v4.trimEnd()}\n1.1.1.0/24\n`);
  fs.copyFileSync(path.join(feeds, 'ips-v6.txt'), path.join(dir, 'ips-v6.txt'));
  builder('import', 'cloudflare', path.join(dir, 'ips-v4.txt'), path.join(dir, 'ips-v6.txt'));
  const mapping = fs
    .readFileSync(demo('asn/asn-ipv4.csv'), 'utf8')
    .replace(
      '185.220.101.0,185.220.102.255,60729,Stiftung Erneuerbare Freiheit',
      '185.220.101.0,185.220.102.255,208294,Relay Org',
    );
  fs.writeFileSync(path.join(dir, 'asn-ipv4.csv'), mapping);
  builder('import', 'ip-location-db', path.join(dir, 'asn-ipv4.csv'), demo('asn/asn-ipv6.csv'));
  builder('import', 'observations', round(3), round(4));
  // Release ids are seconds: make sure the second one gets another.
  await new Promise((resolve) => setTimeout(resolve, 1100));
  builder('release', '--demo');
  const second = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim().replace('.sqlite', '');
  t.not(second, first);

  const diff = builder('diff', first, 'current');
  const changes = diff.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(changes, EXPECTED_CHANGES);
  const counts = new Map<string, number>();
  for (const c of changes) counts.set(c.change as string, (counts.get(c.change as string) ?? 0) + 1);
  t.equal(
    diff.stderr,
    `diff ${first} -> ${second}: ${[...counts].map(([k, n]) => `${k} ${n}`).join(', ')}\n`,
  );
  const same = builder('diff', second, second);
  t.equal(same.stdout, '');
  t.equal(same.stderr, `diff ${second} -> ${second}: no changes\n`);
});
