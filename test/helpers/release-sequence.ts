/**
 * A sequence of demo releases in one state, as test/builder/release-diff.test.ts builds them from
 * the real feed excerpts (test/fixtures/feeds) and observation rounds (demo/data): the first after
 * rounds 1 and 2; the second after rounds 3 and 4 with a changed Cloudflare list (173.245.48.0/20
 * gone, 1.1.1.0/24 added) and mapping (185.220.101.0/23 moved from AS60729 to AS208294); each later
 * one rebuilt from the same inputs (no change a client would see).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './demo-release.js';
import { pointCurrentAt } from './release-files.js';

export interface ReleaseSequence {
  releasesDir: string;
  /** Release ids, oldest first. */
  ids: string[];
  /** Builds one more release from the same inputs; resolves with its id. */
  rebuild(): Promise<string>;
}

export async function buildReleaseSequence(dir: string): Promise<ReleaseSequence> {
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
  const current = () =>
    fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim().replace('.sqlite', '');
  const demo = (f: string) => path.join(ROOT, 'demo/data', f);
  const round = (n: number) => demo(`observations/round-${n}.ndjson`);
  const ids: string[] = [];
  const release = async () => {
    // Release ids are seconds: the next one gets another.
    if (ids.length > 0) await new Promise((resolve) => setTimeout(resolve, 1100));
    builder('release', '--demo');
    ids.push(current());
    return current();
  };
  run(['bash', path.join(ROOT, 'demo/import-feeds.sh'), stateDir, releasesDir]);
  builder('import', 'ip-location-db', demo('asn/asn-ipv4.csv'), demo('asn/asn-ipv6.csv'));
  builder('import', 'tranco', demo('seed.csv'));
  builder('import', 'observations', round(1), round(2));
  await release();
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
  await release();
  return { releasesDir, ids, rebuild: release };
}

/** A releases directory `<dir>/releases` of a server's own; `publish` copies a release of the sequence in and points CURRENT at it. */
export function publisherOf(
  sequence: ReleaseSequence,
  dir: string,
): { releasesDir: string; publish: (id: string) => void } {
  const releasesDir = path.join(dir, 'releases');
  fs.mkdirSync(releasesDir, { recursive: true });
  const publish = (id: string) => {
    fs.copyFileSync(path.join(sequence.releasesDir, `${id}.sqlite`), path.join(releasesDir, `${id}.sqlite`));
    pointCurrentAt(releasesDir, `${id}.sqlite`);
  };
  return { releasesDir, publish };
}
