/**
 * The MMDB export of any release (default the full-scale one of `make bench-build`, built from
 * ../shared/data): its time and size, then 10,000 addresses read back with mmdblookup and the npm
 * maxmind reader and compared with GET /v1/ip (the query layer), as test/builder/mmdb-export.test.ts
 * does on the demo release. Prints "N addresses: maxmind agrees on A, mmdblookup agrees on B";
 * exits 1 when any address differs.
 *
 *   node dist/test/bench/verify-mmdb.js [--releases var/bench/releases] [--out var/bench/ipscope.mmdb]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openRelease } from '../../shared/queries/index.js';
import { exportMmdb } from '../../builder/export/mmdb-export.js';
import { currentReleaseFile } from '../../builder/release/publish.js';
import { BOUNDARY_FEEDS, checkAgreement } from '../helpers/mmdb-check.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const releasesDir = arg('releases', 'var/bench/releases');
const out = arg('out', 'var/bench/ipscope.mmdb');
const file = fs.existsSync(path.join(releasesDir, 'CURRENT')) ? currentReleaseFile(releasesDir) : null;
if (!file) throw new Error(`no release in ${releasesDir} (make bench-build)`);
const release = openRelease(file);
// --existing: check a file exported before (of the same release) instead of exporting again.
if (!process.argv.includes('--existing')) {
  const s = await exportMmdb(release, out);
  console.log(
    `export mmdb: release ${release.id}: ${s.networks} networks from ${s.pieces} pieces, ${s.bytes} bytes, ` +
      `${s.seconds.toFixed(1)} s, peak RSS ${Math.round(process.resourceUsage().maxRSS / 1024)} MB`,
  );
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verify-mmdb-'));
const a = await checkAgreement(release, out, dir);
fs.rmSync(dir, { recursive: true, force: true });
console.log(
  `${a.addresses} addresses (${a.boundaries} range boundaries of ${BOUNDARY_FEEDS.join(', ')}), ${a.withRecord} with a record: ` +
    `maxmind agrees on ${a.agreeMaxmind}, mmdblookup agrees on ${a.agreeMmdblookup}`,
);
for (const d of a.differences.slice(0, 20)) console.log(`  ${d}`);
release.close();
if (a.differences.length > 0) process.exitCode = 1;
