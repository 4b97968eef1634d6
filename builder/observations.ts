/**
 * DNS observations: the NDJSON line format (docs/observations-format.md) and the answer-interval
 * state machine of SPEC.md ("States and transitions"). The collector feeds the same `applyObservations`.
 *
 * Per (name, record type) the state keeps the latest query outcome and the latest good answer.
 * Every address of the current answer has an open interval; an address that leaves the answer
 * set ends its interval (ended_at = the query that saw the change), one that joins opens a new
 * one. The same set in another order or with another TTL only advances last_confirmed. A
 * transient failure (timeout, servfail, malformed) never ends an interval.
 *
 * Batches are applied set-wise in SQL, one transaction each, so an interrupted import leaves
 * whole batches applied; re-running it skips what is already there (a line no newer than the
 * state's last query for that name and type is skipped, not applied twice).
 */
import type { StateDb } from './state.js';
import type { ObservationRecord, Rejected } from './sources/types.js';
import { canonicalIp, parseIp } from '../shared/ip.js';
import { normalizeDomain } from '../shared/domain.js';
import { OUTCOMES, type Outcome, outcomeClass } from '../shared/vocabulary.js';
import { parseIsoToEpoch } from '../shared/time.js';

const OUTCOME_SET = new Set<string>(OUTCOMES);
const FAST_NAME = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)+$/;
const FAST_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

export type ParsedLine = { ok: true; record: ObservationRecord } | { ok: false; reason: string };

function normalizeName(value: unknown, field: string): string | { error: string } {
  if (typeof value !== 'string') return { error: `expected "${field}" to be a string` };
  if (value.length <= 253 && FAST_NAME.test(value)) return value;
  const n = normalizeDomain(value.endsWith('.') ? value : value);
  return n.ok ? n.domain : { error: `"${field}" ${JSON.stringify(value)}: ${n.reason}` };
}

/** Parses one NDJSON line into an observation, or says what is wrong with it. */
export function parseObservationLine(line: string): ParsedLine {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'expected one JSON object per line' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: 'expected one JSON object per line' };
  }
  const o = raw as Record<string, unknown>;
  const name = normalizeName(o.name, 'name');
  if (typeof name !== 'string') return { ok: false, reason: name.error };
  const type = o.type;
  if (type !== 'A' && type !== 'AAAA') {
    return { ok: false, reason: `expected "type" A or AAAA, got ${JSON.stringify(type)}` };
  }
  const time = typeof o.time === 'string' ? parseIsoToEpoch(o.time) : null;
  if (time === null) {
    return { ok: false, reason: `expected "time" as ISO 8601 with offset, got ${JSON.stringify(o.time)}` };
  }
  const outcome = o.outcome;
  if (typeof outcome !== 'string' || !OUTCOME_SET.has(outcome)) {
    return {
      ok: false,
      reason: `expected "outcome" one of ${OUTCOMES.join(', ')}, got ${JSON.stringify(outcome)}`,
    };
  }
  const rawValues = o.values ?? [];
  if (!Array.isArray(rawValues))
    return { ok: false, reason: 'expected "values" to be an array of addresses' };
  const values: string[] = [];
  for (const v of rawValues) {
    if (typeof v !== 'string') return { ok: false, reason: 'expected "values" to be an array of addresses' };
    let canonical: string | null;
    if (type === 'A') {
      canonical = FAST_IPV4.test(v) ? v : null;
    } else {
      const ip = parseIp(v);
      canonical = ip && ip.version === 6 ? canonicalIp(v) : null;
    }
    if (canonical === null) {
      return {
        ok: false,
        reason: `${JSON.stringify(v)} is not an ${type === 'A' ? 'IPv4' : 'IPv6'} address (type ${type})`,
      };
    }
    values.push(canonical);
  }
  if (outcome === 'positive' && values.length === 0) {
    return { ok: false, reason: 'a positive outcome needs at least one address in "values"' };
  }
  if (outcome !== 'positive' && values.length > 0) {
    return { ok: false, reason: `outcome ${outcome} carries no addresses; "values" must be empty` };
  }
  const rawCnames = o.cnames ?? [];
  if (!Array.isArray(rawCnames)) return { ok: false, reason: 'expected "cnames" to be an array of names' };
  const cnames: string[] = [];
  for (const c of rawCnames) {
    const n = normalizeName(typeof c === 'string' && c.endsWith('.') ? c.slice(0, -1) : c, 'cnames');
    if (typeof n !== 'string') return { ok: false, reason: n.error };
    cnames.push(n);
  }
  const sorted = values.length > 1 ? [...new Set(values)].sort() : values;
  return { ok: true, record: { name, type, time, outcome: outcome as Outcome, values: sorted, cnames } };
}

export interface ApplyCounts {
  /** Names and types seen for the first time. */
  created: number;
  /** Same answer as before (last_confirmed advanced). */
  confirmed: number;
  /** Answer changed (intervals ended and/or opened). */
  changed: number;
  /** Transient failures recorded (state marked stale, answer kept). */
  transient: number;
  /** Lines no newer than the state: already applied, not applied again. */
  skipped: number;
}

export function emptyCounts(): ApplyCounts {
  return { created: 0, confirmed: 0, changed: 0, transient: 0, skipped: 0 };
}

const STATUS_NEW = 1;
const STATUS_SKIP = 2;
const STATUS_SIMPLE = 3;

/** Applies observations through the state machine. Prepared once per state database. */
export class ObservationApplier {
  private readonly insertObs;
  private readonly steps: Array<{ run(): unknown }>;
  private readonly statusCounts;
  private readonly applyBatch;

  constructor(private readonly db: StateDb) {
    db.exec(`CREATE TEMP TABLE IF NOT EXISTS obs (
      seq INTEGER PRIMARY KEY, name TEXT NOT NULL, name_id INTEGER, rtype TEXT NOT NULL, t INTEGER NOT NULL,
      outcome TEXT NOT NULL, transient INTEGER NOT NULL, vals TEXT NOT NULL, cnames TEXT NOT NULL,
      status INTEGER NOT NULL DEFAULT 0);
      CREATE TEMP TABLE IF NOT EXISTS gone (name_id INTEGER, rtype TEXT, value TEXT, first_observed INTEGER,
        last_confirmed INTEGER, ended_at INTEGER)`);
    this.insertObs = db.prepare(
      `INSERT INTO obs (name, rtype, t, outcome, transient, vals, cnames) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    );
    const keyMatch = `s.name_id = obs.name_id AND s.rtype = obs.rtype`;
    const sql = [
      `INSERT OR IGNORE INTO dns_name (name) SELECT name FROM obs`,
      `UPDATE obs SET name_id = (SELECT id FROM dns_name WHERE dns_name.name = obs.name)`,
      `UPDATE obs SET status = ${STATUS_NEW} WHERE NOT EXISTS (SELECT 1 FROM dns_state s WHERE ${keyMatch})`,
      `UPDATE obs SET status = ${STATUS_SKIP} WHERE status = 0
         AND t <= (SELECT s.last_observed FROM dns_state s WHERE ${keyMatch})`,
      `UPDATE obs SET status = ${STATUS_SIMPLE} WHERE status = 0 AND (transient = 1 OR EXISTS (
         SELECT 1 FROM dns_state s WHERE ${keyMatch} AND s.good_outcome = obs.outcome AND s.vals = obs.vals))`,
      // Same answer, or a transient failure: only times (and the CNAME chain of a good answer) move.
      `UPDATE dns_state SET outcome = o.outcome, last_observed = o.t,
         last_confirmed = CASE WHEN o.transient = 1 THEN dns_state.last_confirmed ELSE o.t END,
         last_positive = CASE WHEN o.outcome = 'positive' THEN o.t ELSE dns_state.last_positive END,
         cnames = CASE WHEN o.transient = 1 THEN dns_state.cnames ELSE o.cnames END
       FROM obs o WHERE o.status = ${STATUS_SIMPLE} AND o.name_id = dns_state.name_id AND o.rtype = dns_state.rtype`,
      // First sight of a name and type.
      `INSERT INTO dns_state (name_id, rtype, outcome, good_outcome, vals, cnames, last_observed, last_confirmed, last_positive)
       SELECT name_id, rtype, outcome,
         CASE WHEN transient = 1 THEN NULL ELSE outcome END,
         vals, cnames, t,
         CASE WHEN transient = 1 THEN NULL ELSE t END,
         CASE WHEN outcome = 'positive' THEN t END
       FROM obs WHERE status = ${STATUS_NEW}`,
      `INSERT INTO dns_current (name_id, rtype, value, first_observed)
       SELECT o.name_id, o.rtype, j.value, o.t FROM obs o, json_each(o.vals) j WHERE o.status = ${STATUS_NEW}`,
      // A different answer: addresses that left the set end their interval ...
      `DELETE FROM gone`,
      `INSERT INTO gone (name_id, rtype, value, first_observed, last_confirmed, ended_at)
       SELECT c.name_id, c.rtype, c.value, c.first_observed, s.last_positive, o.t
       FROM obs o JOIN dns_state s ON s.name_id = o.name_id AND s.rtype = o.rtype
       JOIN dns_current c ON c.name_id = o.name_id AND c.rtype = o.rtype
       WHERE o.status = 0 AND c.value NOT IN (SELECT value FROM json_each(o.vals))`,
      `INSERT INTO dns_ended (name_id, rtype, value, first_observed, last_confirmed, ended_at) SELECT * FROM gone`,
      `DELETE FROM dns_current WHERE (name_id, rtype, value) IN (SELECT name_id, rtype, value FROM gone)`,
      // ... addresses that joined open one; addresses in both sets keep theirs.
      `INSERT OR IGNORE INTO dns_current (name_id, rtype, value, first_observed)
       SELECT o.name_id, o.rtype, j.value, o.t FROM obs o, json_each(o.vals) j WHERE o.status = 0`,
      `UPDATE dns_state SET outcome = o.outcome, good_outcome = o.outcome, vals = o.vals, cnames = o.cnames,
         last_observed = o.t, last_confirmed = o.t,
         last_positive = CASE WHEN o.outcome = 'positive' THEN o.t ELSE dns_state.last_positive END
       FROM obs o WHERE o.status = 0 AND o.name_id = dns_state.name_id AND o.rtype = dns_state.rtype`,
    ];
    this.steps = sql.map((s) => db.prepare(s));
    this.statusCounts = db.prepare(
      `SELECT status, transient, count(*) AS n FROM obs GROUP BY status, transient`,
    );
    const clear = db.prepare(`DELETE FROM obs`);
    this.applyBatch = db.transaction((records: ObservationRecord[], counts: ApplyCounts) => {
      clear.run();
      for (const r of records) {
        this.insertObs.run(
          r.name,
          r.type,
          r.time,
          r.outcome,
          outcomeClass(r.outcome) === 'transient' ? 1 : 0,
          JSON.stringify(r.values),
          JSON.stringify(r.cnames),
        );
      }
      for (const step of this.steps) step.run();
      for (const row of this.statusCounts.all() as Array<{ status: number; transient: number; n: number }>) {
        if (row.status === STATUS_NEW) counts.created += row.n;
        else if (row.status === STATUS_SKIP) counts.skipped += row.n;
        else if (row.status === STATUS_SIMPLE && row.transient === 1) counts.transient += row.n;
        else if (row.status === STATUS_SIMPLE) counts.confirmed += row.n;
        else counts.changed += row.n;
      }
      clear.run();
    });
  }

  /**
   * Applies records in order. Records for one name and type must come in time order; when a
   * batch holds the same name and type twice, the later one is applied in a following batch.
   */
  apply(records: ObservationRecord[], counts: ApplyCounts = emptyCounts()): ApplyCounts {
    let pending = records;
    while (pending.length > 0) {
      const seen = new Set<string>();
      const batch: ObservationRecord[] = [];
      const later: ObservationRecord[] = [];
      for (const r of pending) {
        const key = `${r.name}\u0000${r.type}`;
        if (seen.has(key)) later.push(r);
        else {
          seen.add(key);
          batch.push(r);
        }
      }
      this.applyBatch(batch, counts);
      pending = later;
    }
    return counts;
  }
}

export interface ObservationFileResult {
  read: number;
  rejected: Rejected[];
  rejectedCount: number;
  counts: ApplyCounts;
}
