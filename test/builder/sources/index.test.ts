import t from 'tap';
import { getSource, SOURCE_NAMES, SOURCES } from '../../../builder/sources/index.js';

t.test('every source is registered once, by a kebab-case name', async (t) => {
  t.strictSame(SOURCE_NAMES, [
    'iptoasn',
    'ip-location-db',
    'aws',
    'google-cloud',
    'azure',
    'oracle',
    'cloudflare',
    'fastly',
    'digitalocean',
    'linode',
    'hetzner',
    'ovh',
    'tor-exit-addresses',
    'tor-bulk-exit',
    'apple-private-relay',
    'googlebot',
    'google-special-crawlers',
    'google-user-triggered-fetchers',
    'bingbot',
    'as-category',
    'as-role',
    'x4bnet-datacenter',
    'asn2org',
    'tranco',
  ]);
  t.equal(new Set(SOURCE_NAMES).size, SOURCES.length);
  for (const source of SOURCES) {
    t.match(source.name, /^[a-z0-9]+(-[a-z0-9]+)*$/);
    t.ok(source.description.length > 0, `${source.name} has a description`);
    t.ok(
      source.attribution.source && source.attribution.by && source.attribution.license,
      `${source.name} attribution`,
    );
    for (const url of source.urls) t.match(url, /^https:\/\//, `${source.name} url ${url}`);
  }
});

t.test('getSource', async (t) => {
  t.equal(getSource('aws')?.kind, 'provider_ranges');
  t.equal(getSource('iptoasn')?.kind, 'asn_mapping');
  t.equal(getSource('asn2org')?.kind, 'as_names');
  t.equal(getSource('tranco')?.kind, 'seed');
  t.equal(getSource('nope'), undefined);
});

t.test('sources without a download URL are imported locally', async (t) => {
  t.strictSame(
    SOURCES.filter((source) => source.urls.length === 0).map((source) => source.name),
    ['azure', 'hetzner', 'ovh', 'as-category', 'as-role', 'tranco'],
  );
});
