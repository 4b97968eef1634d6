/**
 * `builder export mmdb` on the demo release, read back by two readers this project did not write:
 * Debian's mmdblookup (libmaxminddb) and the npm `maxmind` reader. For 10,000 addresses (inside
 * published ranges, inside mapped routes, random IPv4 and IPv6, IPv4-mapped IPv6, and every range
 * boundary of five feeds) each reader's record must agree field for field with GET /v1/ip/{ip} of
 * the same release (the query layer behind it; test/server covers that the route sends it as is).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import maxmind from 'maxmind';
import { openRelease } from '../../shared/queries/index.js';
import { copyDemoRelease, ROOT } from '../helpers/demo-release.js';
import { BOUNDARY_FEEDS, checkAgreement, COUNT, MMDBLOOKUP } from '../helpers/mmdb-check.js';

t.test('MMDB export agrees with GET /v1/ip through mmdblookup and the maxmind reader', async (t) => {
  const dir = t.testdir({});
  const { releasesDir, file, id } = copyDemoRelease(path.join(dir, 'releases'));
  const out = path.join(dir, 'demo.mmdb');
  const run = spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin/builder.js'), '--releases-dir', releasesDir, 'export', 'mmdb', '--out', out],
    { encoding: 'utf8' },
  );
  t.equal(run.status, 0, 'export exits 0');
  t.match(
    run.stderr,
    /^export mmdb: release \d{8}T\d{6}Z: 537 networks from 941 pieces, 30574 bytes, [\d.]+ s -> /,
  );

  const release = openRelease(path.join(releasesDir, file));
  t.teardown(() => release.close());
  const a = await checkAgreement(release, out, dir);
  t.comment(
    `${a.addresses} addresses (${a.boundaries} range boundaries of ${BOUNDARY_FEEDS.join(', ')}), ${a.withRecord} with a record: ` +
      `maxmind agrees on ${a.agreeMaxmind}, mmdblookup agrees on ${a.agreeMmdblookup}`,
  );
  t.equal(a.addresses, COUNT);
  t.same(a.differences.slice(0, 10), [], 'no address differs');
  t.equal(a.agreeMaxmind, COUNT);
  t.equal(a.agreeMmdblookup, COUNT);
  const reader = await maxmind.open<Record<string, unknown>>(out);

  // Exact records of the demo data.
  t.same(reader.get('24.144.76.1'), {
    autonomous_system_number: 14061,
    autonomous_system_organization: 'DigitalOcean, LLC',
    asn: { number: 14061, route: '24.144.76.0/22', name: 'DigitalOcean, LLC', category: 'hosting' },
    provider: 'DigitalOcean',
    prefix: '24.144.76.0/22',
    is_datacenter: true,
  });
  t.same(reader.get('108.177.2.5'), { crawler: { operator: 'Google', bot: 'Google special-case crawler' } });
  t.equal(reader.get('10.0.0.1'), null, 'bogons have no record');

  // Metadata: release id, build time, sources.
  const meta = reader.metadata;
  t.equal(meta.databaseType, 'ipscope-ASN');
  t.equal(meta.ipVersion, 6);
  t.equal(meta.buildEpoch.toISOString().replace('.000Z', 'Z'), release.builtAt);
  const description = (meta.description as unknown as Record<string, string>).en!;
  t.match(description, `ipscope release ${id} (built ${release.builtAt})`);
  t.match(description, 'Sources: apple-private-relay, as-category, as-role, asn2org, aws, azure,');
  const verbose = spawnSync(MMDBLOOKUP, ['--file', out, '--ip', '1.1.1.1', '--verbose'], {
    encoding: 'utf8',
  });
  t.match(verbose.stdout, /Type:\s+ipscope-ASN/);
  t.match(verbose.stdout, `ipscope release ${id}`);
});
