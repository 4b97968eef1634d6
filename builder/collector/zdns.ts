/**
 * `builder import observations --format zdns`: the JSON-lines output of ZDNS 2
 * (https://github.com/zmap/zdns), one name per line, with a result per module:
 *
 *   {"name":"censys.io","results":{"A":{"data":{"answers":[{"answer":"104.18.10.85","class":"IN",
 *    "name":"censys.io","ttl":300,"type":"A"}],…},"duration":0.28,"status":"NOERROR",
 *    "timestamp":"2024-08-23T13:12:43-04:00"}}}
 *
 * Modules A and AAAA become one observation each (a line of `zdns MULTIPLE` with both gives two);
 * other modules are ignored. The answers are read as the collector reads its own (answer.ts): the
 * CNAME chain from the name, the addresses at its end. ZDNS statuses map to outcomes:
 * NOERROR → positive or nodata, NXDOMAIN → nxdomain, TIMEOUT and ITERATIVE_TIMEOUT → timeout,
 * SERVFAIL, REFUSED, AUTHFAIL, NO_NEEDED_GLUE, NOAUTH → servfail, ERROR and TRUNCATED →
 * malformed. Lines that are not a measurement (ILLEGAL_INPUT, BLACKLIST, an unknown status, a
 * name the API would refuse) are rejected with their line number and reason.
 */
import type { StateDb } from '../state.js';
import type { ImportSummary, RejectedExample } from '../importer.js';
import { readLineBatches } from '../line-reader.js';
import { ObservationApplier } from '../observations/applier.js';
import { parseObservationLine } from '../observations/line-parser.js';
import { emptyCounts } from '../dns-state/machine.js';
import type { ObservationRecord } from '../sources/types.js';
import type { Progress } from '../progress.js';
import type { Outcome } from '../../shared/vocabulary.js';
import { readAnswer, type AnswerRecord } from './answer.js';

const STATUS_OUTCOMES: Record<string, Outcome | 'read'> = {
  NOERROR: 'read',
  NXDOMAIN: 'read',
  TIMEOUT: 'timeout',
  ITERATIVE_TIMEOUT: 'timeout',
  SERVFAIL: 'servfail',
  REFUSED: 'servfail',
  AUTHFAIL: 'servfail',
  NO_NEEDED_GLUE: 'servfail',
  NOAUTH: 'servfail',
  ERROR: 'malformed',
  TRUNCATED: 'malformed',
};

export type ZdnsLine = { ok: true; records: ObservationRecord[] } | { ok: false; reason: string };

interface ZdnsResult {
  status?: unknown;
  timestamp?: unknown;
  data?: { answers?: unknown };
}

function toAnswers(raw: unknown): AnswerRecord[] | null {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) return null;
  const out: AnswerRecord[] = [];
  for (const a of raw as Array<Record<string, unknown>>) {
    if (typeof a !== 'object' || a === null || typeof a.name !== 'string' || typeof a.type !== 'string')
      return null;
    out.push({ name: a.name, type: a.type, data: a.answer });
  }
  return out;
}

/** Reads one ZDNS output line into its A/AAAA observations, or says what is wrong with it. */
export function parseZdnsLine(line: string): ZdnsLine {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return { ok: false, reason: 'expected one JSON object per line (ZDNS output)' };
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: 'expected one JSON object per line (ZDNS output)' };
  }
  const o = raw as { name?: unknown; results?: unknown; status?: unknown };
  if (typeof o.name !== 'string') return { ok: false, reason: 'expected "name" to be a string' };
  if (typeof o.results !== 'object' || o.results === null) {
    return {
      ok: false,
      reason:
        'expected "results" with one entry per module (ZDNS 2 output, e.g. {"name":…,"results":{"A":{…}}})',
    };
  }
  const records: ObservationRecord[] = [];
  for (const type of ['A', 'AAAA'] as const) {
    const r = (o.results as Record<string, ZdnsResult | undefined>)[type];
    if (r === undefined) continue;
    const status = typeof r.status === 'string' ? r.status : '';
    const mapped = STATUS_OUTCOMES[status];
    if (mapped === undefined) {
      return { ok: false, reason: `${type}: status ${JSON.stringify(r.status)} is not a DNS answer` };
    }
    let outcome: Outcome;
    let values: string[] = [];
    let cnames: string[] = [];
    if (mapped === 'read') {
      const answers = toAnswers(r.data?.answers);
      if (answers === null)
        return { ok: false, reason: `${type}: expected "data.answers" to be an array of records` };
      const read = readAnswer(status, answers, o.name, type);
      outcome = read.outcome;
      values = read.values;
      cnames = read.cnames;
    } else {
      outcome = mapped;
    }
    // The observation line rules (name normalisation, time, canonical addresses) in one place.
    const parsed = parseObservationLine(
      JSON.stringify({ name: o.name, type, time: r.timestamp, outcome, values, cnames }),
    );
    if (!parsed.ok) return { ok: false, reason: `${type}: ${parsed.reason}` };
    records.push(parsed.record);
  }
  return { ok: true, records };
}

/**
 * Imports ZDNS output files in order through the state machine: one state load, every file, one
 * save (one transaction) at the end. Returns one summary per file, as importObservationFiles.
 */
export async function importZdnsFiles(
  db: StateDb,
  files: string[],
  progress?: (file: string) => Progress,
): Promise<ImportSummary[]> {
  const loadStarted = performance.now();
  const applier = new ObservationApplier(db);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const summaries: ImportSummary[] = [];
  for (const file of files) {
    const started = performance.now();
    const p = progress?.(file);
    const counts = emptyCounts();
    const rejected: RejectedExample[] = [];
    let rejectedCount = 0;
    let read = 0;
    for await (const batch of readLineBatches(file)) {
      const records: ObservationRecord[] = [];
      batch.lines.forEach((line, i) => {
        if (line.trim() === '' || line.startsWith('#')) return;
        read++;
        const parsed = parseZdnsLine(line);
        if (!parsed.ok) {
          rejectedCount++;
          if (rejected.length < 20) rejected.push({ file, line: batch.firstLine + i, reason: parsed.reason });
          return;
        }
        for (const r of parsed.records) records.push(r);
      });
      applier.apply(records, counts);
      p?.tick(batch.lines.length);
    }
    p?.stop();
    summaries.push({
      source: 'observations',
      read,
      written: counts.created + counts.confirmed + counts.changed + counts.transient,
      rejectedCount,
      rejected,
      seconds: (performance.now() - started) / 1000,
      counts,
    });
  }
  const save = applier.save();
  if (summaries.length > 0) summaries[summaries.length - 1]!.state = { loadSeconds, save };
  return summaries;
}
