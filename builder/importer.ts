/**
 * Stores parsed feed snapshots and observation files in the state database.
 *
 * Provider ranges keep first_seen/last_seen across snapshots: a range listed again keeps its
 * first_seen and gets a new last_seen; a range the new snapshot no longer lists becomes inactive
 * (not served) but keeps its dates, so a range that reappears keeps its first_seen. The
 * IP-to-ASN mapping, AS metadata and the seed list are replaced whole by each snapshot.
 */
import fs from 'node:fs';
import { createHash } from 'node:crypto';
import type { StateDb } from './state.js';
import type {
  Rejected,
  SourceDefinition,
  RecordOfKind,
  SourceKind,
  ProviderRangeRecord,
} from './sources/types.js';
import { readChunks, readTextFile } from './line-reader.js';
import { ObservationLineScanner, parseObservationLine } from './observations.js';
import {
  DnsStateMachine,
  ObservationFields,
  emptyCounts,
  type ApplyCounts,
  type SaveResult,
} from './dns-state-machine.js';
import type { Progress } from './progress.js';

export interface SnapshotFile {
  path: string;
  sha256: string;
  bytes: number;
  fetchedAt: number;
  url?: string;
}

export interface RejectedExample extends Rejected {
  file: string;
}

export interface ImportSummary {
  source: string;
  read: number;
  written: number;
  rejectedCount: number;
  rejected: RejectedExample[];
  seconds: number;
  /** provider_ranges only: ranges no longer listed (stopped being served). */
  removed?: number;
  counts?: ApplyCounts;
  /** observations only, on the last file's summary: loading and saving the DNS state. */
  state?: { loadSeconds: number; save: SaveResult };
}

const MAX_EXAMPLES = 20;

export function describeFile(file: string, fetchedAt: number, url?: string): SnapshotFile {
  const bytes = fs.readFileSync(file);
  return {
    path: file,
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes: bytes.length,
    fetchedAt,
    ...(url ? { url } : {}),
  };
}

function canonicalJson(value: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = value[key]!;
  return JSON.stringify(sorted);
}

function versionOf(address: string): 4 | 6 {
  return address.includes(':') ? 6 : 4;
}

/** Parses every file of a snapshot and stores it as the source's current snapshot. */
export function importSnapshot(
  db: StateDb,
  source: SourceDefinition,
  files: SnapshotFile[],
  options: { origin: 'fetch' | 'import'; now: number },
): ImportSummary {
  const started = performance.now();
  const records: RecordOfKind[SourceKind][] = [];
  const rejected: RejectedExample[] = [];
  let rejectedCount = 0;
  let read = 0;
  let publishedAt: string | undefined;
  for (const file of files) {
    const result = source.parse(readTextFile(file.path), file.path);
    read += result.read;
    rejectedCount += result.rejected.length;
    for (const r of result.rejected.slice(0, MAX_EXAMPLES - rejected.length))
      rejected.push({ file: file.path, ...r });
    for (const r of result.records) records.push(r);
    publishedAt = result.publishedAt ?? publishedAt;
  }
  const now = options.now;
  let removed: number | undefined;
  const store = db.transaction(() => {
    switch (source.kind) {
      case 'provider_ranges': {
        removed = storeProviderRanges(db, source.name, records as ProviderRangeRecord[], now);
        break;
      }
      case 'asn_mapping': {
        db.prepare(`DELETE FROM asn_range WHERE source = ?`).run(source.name);
        const insert = db.prepare(
          `INSERT OR REPLACE INTO asn_range (source, version, first, last, asn, country, descr) VALUES (?, ?, ?, ?, ?, ?, ?)`,
        );
        for (const r of records as RecordOfKind['asn_mapping'][]) {
          insert.run(source.name, versionOf(r.first), r.first, r.last, r.asn, r.country, r.descr);
        }
        break;
      }
      case 'as_category':
      case 'as_role':
      case 'as_names': {
        const field =
          source.kind === 'as_category' ? 'category' : source.kind === 'as_role' ? 'network_role' : 'name';
        db.prepare(`DELETE FROM as_meta WHERE field = ? AND source = ?`).run(field, source.name);
        const insert = db.prepare(
          `INSERT OR REPLACE INTO as_meta (asn, field, source, value) VALUES (?, ?, ?, ?)`,
        );
        for (const r of records as Array<
          RecordOfKind['as_category'] | RecordOfKind['as_role'] | RecordOfKind['as_names']
        >) {
          const value = 'category' in r ? r.category : 'networkRole' in r ? r.networkRole : r.name;
          insert.run(r.asn, field, source.name, value);
        }
        break;
      }
      case 'seed': {
        db.prepare(`DELETE FROM seed`).run();
        const insert = db.prepare(`INSERT OR IGNORE INTO seed (domain, rank) VALUES (?, ?)`);
        for (const r of records as RecordOfKind['seed'][]) insert.run(r.domain, r.rank);
        break;
      }
    }
    db.prepare(
      `INSERT OR REPLACE INTO source_snapshot (source, kind, origin, imported_at, published_at, files, records, rejected)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      source.name,
      source.kind,
      options.origin,
      now,
      publishedAt ?? null,
      JSON.stringify(
        files.map((f) => ({
          file: f.path.split('/').pop(),
          ...(f.url ? { url: f.url } : {}),
          sha256: f.sha256,
          bytes: f.bytes,
          fetched_at: f.fetchedAt,
        })),
      ),
      records.length,
      rejectedCount,
    );
  });
  store();
  return {
    source: source.name,
    read,
    written: records.length,
    rejectedCount,
    rejected,
    seconds: (performance.now() - started) / 1000,
    ...(removed !== undefined ? { removed } : {}),
  };
}

function storeProviderRanges(
  db: StateDb,
  sourceName: string,
  records: ProviderRangeRecord[],
  now: number,
): number {
  const before = (
    db
      .prepare(`SELECT count(*) AS n FROM provider_range WHERE source = ? AND active = 1`)
      .get(sourceName) as { n: number }
  ).n;
  db.prepare(`UPDATE provider_range SET active = 0 WHERE source = ?`).run(sourceName);
  const upsert = db.prepare(
    `INSERT INTO provider_range (source, prefix, provider, category, metadata, first_seen, last_seen, active)
     VALUES (?, ?, ?, ?, ?, ?, ?, 1)
     ON CONFLICT (source, prefix, provider, category, metadata) DO UPDATE SET last_seen = excluded.last_seen, active = 1`,
  );
  for (const r of records)
    upsert.run(sourceName, r.prefix, r.provider, r.category, canonicalJson(r.metadata), now, now);
  const stillActive = (
    db
      .prepare(`SELECT count(*) AS n FROM provider_range WHERE source = ? AND active = 1 AND last_seen = ?`)
      .get(sourceName, now) as { n: number }
  ).n;
  return Math.max(0, before - stillActive);
}

/** Imports one NDJSON observation file (see importObservationFiles). */
export async function importObservationFile(
  db: StateDb,
  file: string,
  progress?: Progress,
): Promise<ImportSummary> {
  const [summary] = await importObservationFiles(db, [file], progress);
  return summary!;
}

/**
 * Streams NDJSON observation files, in order, through one in-memory state machine: the DNS state
 * is loaded once, every file is applied, and the result is saved in one transaction at the end
 * (nothing is written if the process dies before; the rerun skips nothing and redoes the work).
 * Returns one summary per file; the last one also carries the load and save times. `progress`
 * is one progress for all files, or a function starting one per file (stopped after the file).
 */
export async function importObservationFiles(
  db: StateDb,
  files: string[],
  progress?: Progress | ((file: string) => Progress),
): Promise<ImportSummary[]> {
  const loadStarted = performance.now();
  const machine = new DnsStateMachine(db);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const summaries: ImportSummary[] = [];
  for (const file of files) {
    const p = typeof progress === 'function' ? progress(file) : progress;
    summaries.push(await applyObservationFile(machine, file, p));
    if (typeof progress === 'function') p?.stop();
  }
  const save = machine.save();
  if (summaries.length > 0) summaries[summaries.length - 1]!.state = { loadSeconds, save };
  return summaries;
}

async function applyObservationFile(
  machine: DnsStateMachine,
  file: string,
  progress?: Progress,
): Promise<ImportSummary> {
  const started = performance.now();
  const scanner = new ObservationLineScanner();
  const fields = new ObservationFields();
  const counts = emptyCounts();
  const rejected: RejectedExample[] = [];
  let rejectedCount = 0;
  let read = 0;
  let lineNumber = 0;
  /** A line the scanner leaves to parseObservationLine: comments, other spellings, errors. */
  const parseLine = (b: Buffer, start: number, end: number): void => {
    const line = b.toString('utf8', start, end);
    if (line.trimStart().startsWith('#')) return;
    read++;
    const parsed = parseObservationLine(line);
    if (parsed.ok) machine.applyRecord(parsed.record, counts);
    else {
      rejectedCount++;
      if (rejected.length < MAX_EXAMPLES) rejected.push({ file, line: lineNumber, reason: parsed.reason });
    }
  };
  let carry: Buffer | null = null;
  for await (const chunk of readChunks(file)) {
    const b: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    const lines = lineNumber;
    let start = 0;
    for (;;) {
      const newline = b.indexOf(10, start);
      if (newline < 0) break;
      lineNumber++;
      const end = newline > start && b[newline - 1] === 13 ? newline - 1 : newline;
      if (end > start) {
        if (scanner.scan(b, start, end, fields)) {
          read++;
          machine.apply(fields, counts);
        } else parseLine(b, start, end);
      }
      start = newline + 1;
    }
    carry = start < b.length ? b.subarray(start) : null;
    progress?.tick(lineNumber - lines);
  }
  if (carry) {
    lineNumber++;
    const end = carry[carry.length - 1] === 13 ? carry.length - 1 : carry.length;
    if (end > 0) {
      if (scanner.scan(carry, 0, end, fields)) {
        read++;
        machine.apply(fields, counts);
      } else parseLine(carry, 0, end);
    }
    progress?.tick(1);
  }
  const written = counts.created + counts.confirmed + counts.changed + counts.transient;
  return {
    source: 'observations',
    read,
    written,
    rejectedCount,
    rejected,
    seconds: (performance.now() - started) / 1000,
    counts,
  };
}
