/**
 * Hosting runs (docs/api.md#get-v1domaindomainhosting): one run per stretch of time a domain spent
 * on one network, where the network is the routing ASN plus the cloud/hosting/CDN provider under
 * the current release. Intervals on the same network that overlap or touch in time form one run; a
 * domain that leaves a network and comes back later starts a new run.
 */
import type { HostingRun } from '../../shared/hosting-run-codec.js';

export { decodeRun, encodeRun, type EncodedRun, type HostingRun } from '../../shared/hosting-run-codec.js';

export interface IntervalOnNetwork {
  rtype: string;
  /** The address, or any number standing for it (only the count of distinct ones is used). */
  value: string | number;
  firstObserved: number;
  lastConfirmed: number;
  endedAt: number | null;
  network: NetworkInfo;
}

export interface NetworkInfo {
  /** Identity of the network: `${asn}|${provider}|${category}`. */
  key: string;
  public: boolean;
  asn: number | null;
  asName: string | null;
  provider: string | null;
  category: string | null;
}

interface OpenRun {
  network: NetworkInfo;
  values: Set<string | number>;
  rtypes: Set<string>;
  first: number;
  last: number;
  /** null while any interval of the run is current. */
  end: number | null;
  anyCurrent: boolean;
}

export const MAX_RUNS = 100;

/** Intervals must be sorted by firstObserved. Returns runs oldest first, capped at MAX_RUNS (newest kept). */
export function buildHostingRuns(intervals: IntervalOnNetwork[]): { runs: HostingRun[]; truncated: boolean } {
  const all: OpenRun[] = [];
  const latestByNetwork = new Map<string, OpenRun>();
  for (const iv of intervals) {
    const open = latestByNetwork.get(iv.network.key);
    const continues = open && (open.anyCurrent || (open.end !== null && iv.firstObserved <= open.end));
    if (open && continues) {
      open.values.add(iv.value);
      open.rtypes.add(iv.rtype);
      open.last = Math.max(open.last, iv.lastConfirmed);
      if (iv.endedAt === null) open.anyCurrent = true;
      else open.end = Math.max(open.end ?? iv.endedAt, iv.endedAt);
    } else {
      const run: OpenRun = {
        network: iv.network,
        values: new Set([iv.value]),
        rtypes: new Set([iv.rtype]),
        first: iv.firstObserved,
        last: iv.lastConfirmed,
        end: iv.endedAt,
        anyCurrent: iv.endedAt === null,
      };
      all.push(run);
      latestByNetwork.set(iv.network.key, run);
    }
  }
  const truncated = all.length > MAX_RUNS;
  const kept = truncated ? all.slice(all.length - MAX_RUNS) : all;
  return {
    truncated,
    runs: kept.map((r) => ({
      public: r.network.public,
      asn: r.network.asn,
      as_name: r.network.asName,
      provider: r.network.provider,
      category: r.network.category,
      addresses: r.values.size,
      record_types: [...r.rtypes].sort(),
      first_observed: r.first,
      last_confirmed: r.last,
      ended_at: r.anyCurrent ? null : r.end,
      current: r.anyCurrent,
    })),
  };
}
