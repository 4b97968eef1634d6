import t from 'tap';
import {
  buildHostingRuns,
  decodeRun,
  encodeRun,
  MAX_RUNS,
  type NetworkInfo,
} from '../../builder/release/hosting-runs.js';

const linode: NetworkInfo = {
  key: '63949|Linode',
  public: true,
  asn: 63949,
  asName: 'AKAMAI-LINODE-AP',
  provider: 'Linode',
  category: 'hosting',
};
const cloudflare: NetworkInfo = {
  key: '13335|Cloudflare',
  public: true,
  asn: 13335,
  asName: 'CLOUDFLARENET',
  provider: 'Cloudflare',
  category: 'cdn',
};
const day = (n: number) => 1_790_000_000 + n * 86_400;

t.test('a move, a return to the same network, and one run for two addresses that overlap', async (t) => {
  const { runs, truncated } = buildHostingRuns([
    {
      rtype: 'A',
      value: '72.14.177.42',
      firstObserved: day(0),
      lastConfirmed: day(7),
      endedAt: day(14),
      network: linode,
    },
    {
      rtype: 'AAAA',
      value: '2600:3c00::1',
      firstObserved: day(0),
      lastConfirmed: day(7),
      endedAt: day(14),
      network: linode,
    },
    {
      rtype: 'A',
      value: '104.21.48.7',
      firstObserved: day(14),
      lastConfirmed: day(21),
      endedAt: day(28),
      network: cloudflare,
    },
    {
      rtype: 'A',
      value: '72.14.177.42',
      firstObserved: day(28),
      lastConfirmed: day(35),
      endedAt: null,
      network: linode,
    },
  ]);
  t.equal(truncated, false);
  t.same(
    runs.map((r) => [
      r.provider,
      r.addresses,
      r.record_types,
      r.first_observed,
      r.last_confirmed,
      r.ended_at,
      r.current,
    ]),
    [
      ['Linode', 2, ['A', 'AAAA'], day(0), day(7), day(14), false],
      ['Cloudflare', 1, ['A'], day(14), day(21), day(28), false],
      ['Linode', 1, ['A'], day(28), day(35), null, true],
    ],
  );
  t.same(decodeRun(encodeRun(runs[2]!), 'AKAMAI-LINODE-AP'), runs[2]);
});

t.test('an address replaced by another on the same network continues the run', async (t) => {
  const { runs } = buildHostingRuns([
    {
      rtype: 'A',
      value: '104.16.0.1',
      firstObserved: day(0),
      lastConfirmed: day(1),
      endedAt: day(2),
      network: cloudflare,
    },
    {
      rtype: 'A',
      value: '104.16.0.2',
      firstObserved: day(2),
      lastConfirmed: day(3),
      endedAt: null,
      network: cloudflare,
    },
  ]);
  t.equal(runs.length, 1);
  t.same(
    [runs[0]!.addresses, runs[0]!.first_observed, runs[0]!.ended_at, runs[0]!.current],
    [2, day(0), null, true],
  );
});

t.test('runs are capped at MAX_RUNS, newest kept, truncated set', async (t) => {
  const intervals = [];
  for (let i = 0; i < MAX_RUNS + 5; i++) {
    const network = i % 2 === 0 ? linode : cloudflare;
    intervals.push({
      rtype: 'A',
      value: `192.0.2.${i % 2}`,
      firstObserved: day(2 * i),
      lastConfirmed: day(2 * i),
      endedAt: day(2 * i + 1),
      network,
    });
  }
  const { runs, truncated } = buildHostingRuns(intervals);
  t.equal(truncated, true);
  t.equal(runs.length, MAX_RUNS);
  t.equal(runs[0]!.first_observed, day(10));
});
