import type Database from 'better-sqlite3';
import { currentDomains, type IntervalArrays } from './intervals.js';

/**
 * Per AS the observed counts: addresses in its ranges with a current domain, and the distinct
 * current domains on them. `asnOfValue` is the routing AS of each address (NaN: none). Run by the
 * worker thread on its asn table once the hosting runs have set asnOfValue.
 */
export function writeObserved(
  db: Database.Database,
  iv: IntervalArrays,
  byValue: { start: Int32Array; rows: Int32Array },
  asnOfValue: Float64Array,
): void {
  const { start, rows } = byValue;
  const observedIps = new Map<number, number>();
  const observedDomains = new Map<number, Set<number>>();
  const ids: number[] = [];
  for (let v = 0; v < asnOfValue.length; v++) {
    const asn = asnOfValue[v]!;
    if (asn !== asn) continue;
    currentDomains(iv, rows, start[v]!, start[v + 1]!, ids);
    if (ids.length === 0) continue;
    observedIps.set(asn, (observedIps.get(asn) ?? 0) + 1);
    let set = observedDomains.get(asn);
    if (!set) observedDomains.set(asn, (set = new Set()));
    for (const id of ids) set.add(id);
  }
  // Without any DNS observation the release counts none: observed stays null ("unknown, never zero").
  if (db.prepare(`SELECT EXISTS (SELECT 1 FROM st.dns_state)`).pluck().get() !== 1) return;
  const update = db.prepare(`UPDATE asn SET observed_ips = ?, observed_domains = ? WHERE asn = ?`);
  db.exec(`UPDATE asn SET observed_ips = 0, observed_domains = 0`);
  for (const [asn, ips] of observedIps) update.run(ips, observedDomains.get(asn)!.size, asn);
}
