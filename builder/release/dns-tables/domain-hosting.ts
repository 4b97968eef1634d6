import type Database from 'better-sqlite3';
import { RowWriter } from '../../row-writer.js';
import { buildHostingRuns, encodeRun, type IntervalOnNetwork, type NetworkInfo } from '../hosting-runs.js';
import { NetworkResolver } from '../network-resolver.js';
import type { IntervalArrays } from './intervals.js';
import type { PackedText } from './packed-text.js';

/** Hosting runs, domain by domain (the intervals are in domain order). */
export function writeHostingRuns(
  db: Database.Database,
  networks: NetworkResolver,
  iv: IntervalArrays,
  values: PackedText,
  asnOfValue: Float64Array,
): void {
  const insert = new RowWriter(
    db,
    3,
    (rows) => `INSERT INTO domain_hosting (domain_id, runs, truncated) VALUES ${rows}`,
  );
  const byValue: Array<NetworkInfo | undefined> = new Array<NetworkInfo | undefined>(values.length);
  // NetworkResolver keeps the first network it resolves per (ASN, provider) key, category included:
  // resolve in the order the release has always used (first the addresses with a current domain,
  // in address order, then the rest in domain order) so that the same category wins.
  const current = new Uint8Array(values.length);
  for (let i = 0; i < iv.count; i++) if (iv.ended[i] !== iv.ended[i]) current[iv.value[i]!] = 1;
  for (let v = 0; v < values.length; v++) if (current[v]) byValue[v] = networks.of(values.get(v));
  const pending: IntervalOnNetwork[] = [];
  // The interval objects are reused from domain to domain (buildHostingRuns keeps none of them),
  // and carry the value number, not its text: millions fewer objects and strings to collect.
  const pool: IntervalOnNetwork[] = [];
  for (let i = 0; i < iv.count;) {
    const d = iv.domain[i]!;
    pending.length = 0;
    for (; i < iv.count && iv.domain[i] === d; i++) {
      const v = iv.value[i]!;
      const e = iv.ended[i]!;
      const item = (pool[pending.length] ??= {
        rtype: 'A',
        value: 0,
        firstObserved: 0,
        lastConfirmed: 0,
        endedAt: null,
        network: NetworkResolver.BOGON,
      });
      item.rtype = iv.aaaa[i] ? 'AAAA' : 'A';
      item.value = v;
      item.firstObserved = iv.first[i]!;
      item.lastConfirmed = iv.last[i]!;
      item.endedAt = e === e ? e : null;
      item.network = byValue[v] ??= networks.of(values.get(v));
      pending.push(item);
    }
    // Already in first_observed order (then record type and value), as buildHostingRuns needs.
    const { runs, truncated } = buildHostingRuns(pending);
    insert.row(d, JSON.stringify(runs.map(encodeRun)), truncated ? 1 : 0);
  }
  insert.flush();
  for (let v = 0; v < byValue.length; v++) asnOfValue[v] = byValue[v]?.asn ?? NaN;
}
