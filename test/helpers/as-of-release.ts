/**
 * The release the as-of query tests share (test/shared/queries-as-of*.test.ts): a private copy of
 * the demo release given a history by hand (history-release.ts): an older epoch (built 2026-10-10)
 * with small, exact rows, and the release itself as the newest epoch.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { ipKey, parseIp } from '../../shared/ip.js';
import { openRelease } from '../../shared/queries/index.js';
import { copyDemoRelease } from './demo-release.js';
import { writeHistory } from './history-release.js';

export const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
export const at = (text: string) => Date.parse(text) / 1000;
const key = (text: string) => {
  const ip = parseIp(text)!;
  return ipKey(ip.version, ip.value);
};

/** The older epoch: built 2026-10-10, its DNS cut and last round in the first demo round. */
export const E1 = {
  built: at('2026-10-10T00:00:00Z'),
  cut: 1790813100,
  roundFrom: 1790813000,
  roundTo: 1790813105,
};
export const SOURCE_DATE_1 = at('2026-10-09T00:00:00Z');
export const OLD_COVERAGE = {
  observation_window: { first: '2026-10-01T00:00:00Z', last: iso(E1.cut) },
  vantage_count: 1,
};
export const OLD_ATTRIBUTION = [{ source: 'old', by: 'someone', license: 'MIT' }];
/** A moment the older epoch answers. */
export const OLD_T = '2026-10-11T12:00:00Z';

/** The release, opened; `now`: an hour after it was built. Removed when `t` ends. */
export function openHistoryRelease(t: Test) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'queries-as-of-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const demo = copyDemoRelease(path.join(work, 'releases'));
  const file = path.join(demo.releasesDir, demo.file);
  // The newest epoch is this release: its meta as stored.
  {
    const opened = openRelease(file);
    const newest = {
      epoch: 2,
      release_id: opened.id,
      built_at: opened.builtAtEpoch,
      dns_cut: 1792627910,
      round_from: 1792627200,
      round_to: 1792627910,
      coverage: JSON.stringify(opened.coverage),
      attribution: JSON.stringify(opened.attribution),
      source_dates: '{}',
    };
    opened.close();
    const old = { e_from: 1, e_to: 2 };
    const state = (lastPositive: number) =>
      JSON.stringify([['A', 'positive', ['104.16.132.229'], [], -1, -1, lastPositive]]);
    const seedName = (name: string, rank: number, lastPositive = -1) => ({
      name,
      rank,
      in_seed: 1,
      states: state(lastPositive),
      ...old,
    });
    writeHistory(
      file,
      {
        epoch: [
          {
            epoch: 1,
            release_id: '20261010T000000Z',
            built_at: E1.built,
            dns_cut: E1.cut,
            round_from: E1.roundFrom,
            round_to: E1.roundTo,
            coverage: JSON.stringify(OLD_COVERAGE),
            attribution: JSON.stringify(OLD_ATTRIBUTION),
            source_dates: JSON.stringify({ cloudflare: SOURCE_DATE_1 }),
          },
          newest,
        ],
        provider_range_hist: [
          {
            hid: 1,
            prefix: '104.16.0.0/12',
            version: 4,
            first: key('104.16.0.0'),
            last: key('104.31.255.255'),
            prefix_length: 12,
            provider: 'Cloudflare',
            category: 'cdn',
            metadata: '{"service":"old"}',
            first_seen: at('2026-09-01T00:00:00Z'),
            last_seen: -2,
            source: 'cloudflare',
            ...old,
          },
        ],
        provider_segment_hist: [
          {
            first: key('104.16.0.0'),
            last: key('104.31.255.255'),
            range_hids: '[1]',
            hosting_range_hid: 1,
            ...old,
          },
        ],
        asn_range_hist: [
          ['104.16.0.0', '104.16.255.255', 0, 10],
          ['1.1.1.0', '1.1.1.255', 0, 11],
          ['104.16.0.0', '104.16.127.255', 0, 12],
        ].map(([first, last, ord, hid]) => ({
          hid,
          first: key(first as string),
          last: key(last as string),
          version: 4,
          first_text: first,
          last_text: last,
          asn: 13335,
          country: hid === 10 ? 'GB' : null,
          descr: null,
          prefixes: JSON.stringify([`${first as string}/${hid === 11 ? 24 : hid === 10 ? 16 : 17}`]),
          source: 'iptoasn',
          ord,
          ...old,
        })),
        asn_segment_hist: [{ first: key('104.16.0.0'), last: key('104.16.255.255'), range_hid: 10, ...old }],
        asn_hist: [
          {
            asn: 13335,
            name: 'CLOUDFLARE-OLD',
            country: 'US',
            source: 'iptoasn',
            category: 'hosting',
            category_source: 'external',
            network_role: null,
            routes_v4: 3,
            routes_v6: 0,
            ipv4_addresses: 65792,
            providers: '[]',
            observed_ips: 1,
            observed_domains: 9,
            ...old,
          },
          {
            ...{
              asn: 16509,
              name: 'AMAZON-OLD',
              routes_v4: 0,
              routes_v6: 0,
              ipv4_addresses: 0,
              providers: '[]',
            },
            ...old,
          },
        ],
        ptr_hist: [
          {
            value: '104.16.132.229',
            names: '["edge.example."]',
            status: 'ok',
            checked_at: -1,
            last_confirmed: 1790000000,
            ...old,
          },
        ],
        ip_summary_hist: [
          {
            value: '104.16.132.229',
            current_count: 9,
            sample: '["example.net","example.com"]',
            first_observed: 1790813000,
            last_confirmed: -1,
            ...old,
          },
        ],
        domain_hist: [
          // example.net outranks example.com then: the reverse of the newest release's ids.
          seedName('example.net', 1),
          seedName('example.com', 2, 1790813001),
          seedName('blog.example', 10, 1790813100),
          seedName('www.blog.example', 10),
          seedName('forum.example', 11),
          seedName('www.forum.example', 11),
          seedName('wiki.example', 12),
          seedName('www.wiki.example', 12),
          seedName('docs.example', 13),
        ],
        domain_hosting_hist: [
          {
            name: 'example.com',
            runs: '[[1,16509,"AWS","cdn",2,1,1790812800,-1,null]]',
            truncated: 0,
            ...old,
          },
        ],
      },
      // Two names first seen on the address at one instant (ids 1 and 3: example.com, example.net).
      [
        `INSERT INTO dns_interval (domain_id, rtype, value, first_observed, last_confirmed, ended_at)
           VALUES (1, 'A', '104.16.132.229', 1790813000, 1790813050, NULL),
                  (3, 'A', '104.16.132.229', 1790813000, 1790813400, 1790813500)`,
      ],
    );
  }

  const release = openRelease(file);
  t.teardown(() => release.close());
  return { release, now: release.builtAtEpoch + 3600 };
}
