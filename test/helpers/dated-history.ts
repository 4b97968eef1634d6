/**
 * A generated history for the as_of property test: every import, observation round and release at
 * its own instant over eight days of October 2026, from dated variants of the real feed excerpts
 * (dated-feeds.ts) and generated rounds (dated-rounds.ts). Eight releases: after day 1's full
 * import, after each day's churn, two on day 5 (the second after imports only), one on day 7 after
 * a day without anything (the Tor exits of day 5 age out) and one on day 8 with nothing new. Some
 * releases follow two imports, one follows two rounds. A pure function of its seed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  asn2orgVariant,
  awsVariant,
  AWS_ADDED,
  AWS_DROPPED,
  baseMapping,
  cloudflareVariant,
  editMapping,
  iptoasnVariant,
  mappingFiles,
  torExitList,
  torListAddresses,
  TOR_POOL,
  type FeedFile,
} from './dated-feeds.js';
import { roundAddresses, roundFile, roundNames, roundSeconds, seedList } from './dated-rounds.js';

export type HistoryEvent =
  | { kind: 'import'; at: number; source: string; files: FeedFile[] }
  | { kind: 'round'; at: number; end: number; round: number; text: string }
  | { kind: 'release'; at: number };

export interface DatedHistory {
  events: HistoryEvent[];
  /** How long each round lasts (the tolerance on DNS round times). */
  roundSeconds: number;
  /** Keys worth asking: addresses of the rounds, of changed ranges, Tor exits, mapping rows changed. */
  ips: string[];
  domains: string[];
  asns: string[];
}

const FEEDS = fileURLToPath(new URL('../fixtures/feeds/', import.meta.url));
const ROOT = path.resolve(FEEDS, '../../..');
/** The number of rounds in the history. */
export const ROUNDS = 7;
const DAY = 86_400;
const HOUR = 3600;
/** 2026-10-01T00:00:00Z: the history's first day. */
export const HISTORY_START = Date.UTC(2026, 9, 1) / 1000;

/** Every committed excerpt of a feed, as imported on day 1 (the Tor TorDNSEL list is dated: generated). */
function fixtureSnapshots(): Array<{ source: string; files: FeedFile[] }> {
  const skip = new Set(['tranco', 'tor-exit-addresses', 'ip-location-db', 'iptoasn']);
  return fs
    .readdirSync(FEEDS, { withFileTypes: true })
    .filter((d) => d.isDirectory() && !skip.has(d.name))
    .map((d) => d.name)
    .sort()
    .map((source) => ({
      source,
      files: fs
        .readdirSync(path.join(FEEDS, source))
        .filter((f) => !f.endsWith('.md'))
        .sort()
        .map((name) => ({ name, text: fs.readFileSync(path.join(FEEDS, source, name), 'utf8') })),
    }));
}

export function datedHistory(seed = 33): DatedHistory {
  const events: HistoryEvent[] = [];
  const day = (n: number) => HISTORY_START + (n - 1) * DAY;
  const imp = (at: number, source: string, files: FeedFile[]) =>
    events.push({ kind: 'import', at, source, files });
  let round = 0;
  const obs = (at: number) => {
    events.push({
      kind: 'round',
      at,
      end: at + roundSeconds(ROUNDS),
      round,
      text: roundFile(round, ROUNDS, at, seed),
    });
    round++;
  };
  const release = (at: number) => events.push({ kind: 'release', at });
  const tor: FeedFile[] = [];
  const torAt = (at: number) => {
    const file = torExitList(at - 120, seed + at);
    tor.push(file);
    imp(at, 'tor-exit-addresses', [file]);
  };
  const demoAsn = {
    v4: fs.readFileSync(path.join(ROOT, 'demo/data/asn/asn-ipv4.csv'), 'utf8'),
    v6: fs.readFileSync(path.join(ROOT, 'demo/data/asn/asn-ipv6.csv'), 'utf8'),
  };
  const mapping1 = baseMapping(demoAsn);
  const mapping3 = editMapping(mapping1, [
    // The Tor operator's block moves to another AS; Cloudflare's row splits in two; Fastly renamed.
    { first: '185.220.101.0', rows: [['185.220.101.0', '185.220.102.255', 208294, 'Relay Org']] },
    {
      first: '104.16.0.0',
      rows: [
        ['104.16.0.0', '104.19.255.255', 13335, 'Cloudflare, Inc.'],
        ['104.20.0.0', '104.21.127.255', 13335, 'Cloudflare, Inc.'],
      ],
    },
    {
      first: '2a04:4e42::',
      rows: [['2a04:4e42::', '2a04:4e42:ffff:ffff:ffff:ffff:ffff:ffff', 54113, 'Fastly']],
    },
  ]);

  // Day 1: every feed, the seed, round 1, the first release.
  let t = day(1);
  for (const snapshot of fixtureSnapshots()) imp((t += 60), snapshot.source, snapshot.files);
  imp((t += 60), 'ip-location-db', mappingFiles(mapping1));
  imp((t += 60), 'iptoasn', iptoasnVariant({}));
  torAt((t += 60));
  imp((t += 60), 'tranco', [{ name: 'top-1m.csv', text: seedList(ROUNDS) }]);
  obs(day(1) + HOUR);
  release(day(1) + 6 * HOUR);

  // Day 2: AWS drops two ranges and adds two (new createDate), Tor exits churn, round 2.
  imp(day(2) + 300, 'aws', [awsVariant(day(2) - 2 * HOUR, AWS_DROPPED, AWS_ADDED)]);
  torAt(day(2) + 600);
  obs(day(2) + HOUR);
  release(day(2) + 6 * HOUR);

  // Day 3: the mapping changes (an AS change, a split, a renamed AS), AS names change, round 3.
  imp(day(3) + 300, 'ip-location-db', mappingFiles(mapping3));
  imp(day(3) + 400, 'asn2org', [
    asn2orgVariant({ 13335: 'Cloudflare, Inc.', 16509: 'Amazon Web Services' }, { 208294: 'Relay Org' }),
  ]);
  obs(day(3) + HOUR);
  release(day(3) + 6 * HOUR);

  // Day 4: two imports and two rounds before one release.
  imp(day(4) + 300, 'cloudflare', cloudflareVariant(['173.245.48.0/20'], ['104.28.0.0/16']));
  torAt(day(4) + 400);
  obs(day(4) + HOUR);
  obs(day(4) + 3 * HOUR);
  release(day(4) + 6 * HOUR);

  // Day 5: a round and a release; later imports only (Tor, an iptoasn row changing AS) and a release.
  obs(day(5) + HOUR);
  release(day(5) + 6 * HOUR);
  torAt(day(5) + 11 * HOUR);
  imp(
    day(5) + 11 * HOUR + 100,
    'iptoasn',
    iptoasnVariant({ '35.206.128.0': [15169, 'US', 'GOOGLE - Google LLC'] }),
  );
  release(day(5) + 12 * HOUR);

  // Day 6: nothing. Day 7: AWS lists the dropped CloudFront range again; round 7; a late release
  // (day 5's Tor exits are older than two days by then).
  imp(day(7) + 300, 'aws', [awsVariant(day(7) - HOUR, [AWS_DROPPED[1]], AWS_ADDED)]);
  obs(day(7) + HOUR);
  release(day(7) + 18 * HOUR);

  // Day 8: a release with nothing new.
  release(day(8) + 6 * HOUR);

  const changedRanges = [
    '120.52.22.97',
    '3.5.140.1',
    '15.181.240.9',
    '2600:9000:f000::1',
    '173.245.48.1',
    '104.28.1.1',
  ];
  const mappingRows = [
    '185.220.101.1',
    '104.19.255.255',
    '104.20.0.0',
    '2a04:4e42::1',
    '35.206.130.1',
    '35.206.192.1',
  ];
  const special = ['10.1.2.3', '192.0.2.1', '::1', '77.88.1.1', '2c0f:ffff::1', '8.8.8.8', '1.1.1.1'];
  const ips = [
    ...new Set([
      ...roundAddresses(ROUNDS, seed),
      ...changedRanges,
      ...mappingRows,
      ...special,
      ...TOR_POOL,
      ...tor.flatMap(torListAddresses),
    ]),
  ];
  const names = roundNames(ROUNDS);
  const domains = [
    ...new Set([
      ...names,
      ...names.map((n) => n.replace(/^www\./, '')),
      'unseen.example',
      'www.gone.example',
    ]),
  ];
  const asnsOf = (rows: Array<[string, string, number, string]>) => rows.map((r) => String(r[2]));
  const asns = [
    ...new Set([
      ...asnsOf([...mapping1.v4, ...mapping1.v6, ...mapping3.v4, ...mapping3.v6]),
      '15169',
      '19527',
      '208294',
      '64512',
      '4',
    ]),
  ];
  events.sort((a, b) => a.at - b.at);
  return { events, roundSeconds: roundSeconds(ROUNDS), ips, domains, asns };
}
