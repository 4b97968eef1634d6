/**
 * Stores parsed feed snapshots and observation files in the state database.
 *
 * Provider ranges keep first_seen/last_seen across snapshots. A snapshot dates each of its ranges
 * by the publisher where it can: the entry's own date (TorDNSEL's ExitAddress time), else the
 * file's own date (AWS createDate, Google creationTime, …: ParseResult.publishedAt), else the time
 * the file was fetched (for `builder import`, the import). first_seen is the earliest and last_seen
 * the latest of those dates over the snapshots that listed the range. A range the new snapshot no
 * longer lists becomes inactive (not served) but keeps its dates, so a range that reappears keeps
 * its first_seen. The IP-to-ASN mapping (every row, in file order), AS metadata and the seed list
 * are replaced whole by each snapshot.
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
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { readLineChunks, readTextFile } from './line-reader.js';
import {
  applyScannedChunk,
  spareTransferList,
  scanChunk,
  type ChunkBuffers,
  type ScannedChunk,
} from './observations/chunks.js';
import { DnsStateMachine, emptyCounts, type ApplyCounts } from './dns-state/machine.js';
import type { SaveResult } from './dns-state/save.js';
import { RowWriter } from './row-writer.js';
import { coverageInState, coverageOf } from './coverage.js';
import { checkFeedDrop, type DropCheck, type DropLimits } from './drop-gate.js';
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
  /** With a gate: the measures that fell by more than it allows; not accepted: nothing was stored. */
  drop?: DropCheck & { accepted: boolean };
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

/**
 * Parses every file of a snapshot and stores it as the source's current snapshot. With `gate`
 * (builder import), a snapshot that drops more rows or covered addresses than the state's current
 * one of the source by more than the limits allow is not stored unless `accept` (drop-gate.ts).
 */
export function importSnapshot(
  db: StateDb,
  source: SourceDefinition,
  files: SnapshotFile[],
  options: { origin: 'fetch' | 'import'; now: number; gate?: { limits: DropLimits; accept: boolean } },
): ImportSummary {
  const started = performance.now();
  const records: RecordOfKind[SourceKind][] = [];
  /** Per record, the date the snapshot gives it (epoch seconds; provider ranges only). */
  const dates: number[] = [];
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
    const fileDate = result.publishedAt !== undefined ? epochOf(result.publishedAt) : file.fetchedAt;
    for (const r of result.records) {
      records.push(r);
      if (source.kind === 'provider_ranges') {
        const seenAt = (r as ProviderRangeRecord).seenAt;
        dates.push(seenAt !== undefined ? epochOf(seenAt) : fileDate);
      }
    }
    publishedAt = result.publishedAt ?? publishedAt;
  }
  let drop: ImportSummary['drop'];
  const previousRows = options.gate
    ? (db.prepare(`SELECT records FROM source_snapshot WHERE source = ?`).pluck().get(source.name) as
        number | undefined)
    : undefined;
  if (options.gate && previousRows !== undefined) {
    const before = { rows: previousRows, coverage: coverageInState(db, source) };
    const after = { rows: records.length, coverage: coverageOf(source.kind, records) };
    const check = checkFeedDrop(source, before, after, options.gate.limits);
    if (check.drops.length > 0) drop = { ...check, accepted: options.gate.accept };
  }
  if (drop && !drop.accepted) {
    const seconds = (performance.now() - started) / 1000;
    return { source: source.name, read, written: 0, rejectedCount, rejected, seconds, drop };
  }
  const now = options.now;
  let removed: number | undefined;
  const store = db.transaction(() => {
    switch (source.kind) {
      case 'provider_ranges': {
        removed = storeProviderRanges(db, source.name, records as ProviderRangeRecord[], dates);
        break;
      }
      case 'asn_mapping': {
        db.prepare(`DELETE FROM asn_range WHERE source = ?`).run(source.name);
        const mapping = records as RecordOfKind['asn_mapping'][];
        // Every row, nested and repeated ones too, numbered in file order (the release's tie-break).
        const insert = rowWriter(
          db,
          `INSERT INTO asn_range (source, seq, version, first, last, asn, country, descr)`,
          8,
        );
        const v = insert.values;
        for (let i = 0; i < mapping.length; i++) {
          const r = mapping[i]!;
          const at = insert.at;
          v[at] = source.name;
          v[at + 1] = i + 1;
          v[at + 2] = versionOf(r.first);
          v[at + 3] = r.first;
          v[at + 4] = r.last;
          v[at + 5] = r.asn;
          v[at + 6] = r.country;
          v[at + 7] = r.descr;
          insert.endRow();
        }
        insert.flush();
        break;
      }
      case 'as_category':
      case 'as_role':
      case 'as_names': {
        const field =
          source.kind === 'as_category' ? 'category' : source.kind === 'as_role' ? 'network_role' : 'name';
        db.prepare(`DELETE FROM as_meta WHERE field = ? AND source = ?`).run(field, source.name);
        const meta = records as Array<
          RecordOfKind['as_category'] | RecordOfKind['as_role'] | RecordOfKind['as_names']
        >;
        const insert = rowWriter(db, `INSERT OR REPLACE INTO as_meta (asn, field, source, value)`, 4);
        const v = insert.values;
        for (const r of meta) {
          const at = insert.at;
          v[at] = r.asn;
          v[at + 1] = field;
          v[at + 2] = source.name;
          v[at + 3] = 'category' in r ? r.category : 'networkRole' in r ? r.networkRole : r.name;
          insert.endRow();
        }
        insert.flush();
        break;
      }
      case 'seed': {
        db.prepare(`DELETE FROM seed`).run();
        const seed = records as RecordOfKind['seed'][];
        const insert = rowWriter(db, `INSERT OR IGNORE INTO seed (domain, rank)`, 2);
        const v = insert.values;
        for (const r of seed) {
          const at = insert.at;
          v[at] = r.domain;
          v[at + 1] = r.rank;
          insert.endRow();
        }
        insert.flush();
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
    ...(drop ? { drop } : {}),
  };
}

/** Rows per multi-row INSERT of a snapshot: a statement call costs about a microsecond. */
const ROWS_PER_STATEMENT = 64;

/**
 * Rows of `columns` values inserted with `head` (`INSERT … INTO t (…)`), ROWS_PER_STATEMENT rows
 * per statement, in order: the same rows, conflicts resolved the same way, as one statement per row.
 */
function rowWriter(db: StateDb, head: string, columns: number): RowWriter {
  return new RowWriter(db, columns, (rows) => `${head} VALUES ${rows}`, ROWS_PER_STATEMENT);
}

/** Epoch seconds of an ISO 8601 UTC time (the parsers' publishedAt / seenAt). */
function epochOf(iso: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`not an ISO 8601 time: ${JSON.stringify(iso)}`);
  return Math.floor(ms / 1000);
}

/**
 * Stores a provider feed's snapshot: each record dated `dates[i]` (epoch seconds). Returns how
 * many ranges the previous snapshot listed and this one does not (they become inactive).
 */
function storeProviderRanges(
  db: StateDb,
  sourceName: string,
  records: ProviderRangeRecord[],
  dates: number[],
): number {
  // 2 marks "listed by the previous snapshot, not (yet) by this one"; the upsert sets 1.
  db.prepare(`UPDATE provider_range SET active = 2 WHERE source = ? AND active = 1`).run(sourceName);
  const upsert = db.prepare(
    `INSERT INTO provider_range (source, prefix, provider, category, metadata, first_seen, last_seen, active)
     VALUES (?, ?, ?, ?, ?, ?, ?, 1)
     ON CONFLICT (source, prefix, provider, category, metadata) DO UPDATE SET
       first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen), active = 1`,
  );
  records.forEach((r, i) =>
    upsert.run(sourceName, r.prefix, r.provider, r.category, canonicalJson(r.metadata), dates[i], dates[i]),
  );
  return db.prepare(`UPDATE provider_range SET active = 0 WHERE source = ? AND active = 2`).run(sourceName)
    .changes;
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

/** Options of importObservationFiles. */
export interface ObservationImportOptions {
  /**
   * Worker threads that scan lines while this thread applies them. Default: none for less than
   * 16 MiB of files (starting workers costs more) or a single CPU; else one per CPU but one, at
   * least 2 (this thread is mostly idle: scanning a line costs about three times applying it) and
   * at most 3.
   */
  workers?: number;
  /** dns_state rows from which the save writes them in those worker threads too (default 200,000). */
  parallelSaveRows?: number;
}

/** Chunks in flight per worker: enough to keep a worker busy while the previous result is applied. */
const CHUNKS_PER_WORKER = 4;
/** Input buffers: a read chunk (1 MiB) plus the unfinished line before it. */
const INPUT_BUFFER_BYTES = 2 << 20;

/** Scans chunks of lines in worker threads; results come back as promises. */
class ScanPool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<
    number,
    { resolve: (c: ScannedChunk) => void; reject: (e: Error) => void }
  >();
  private nextId = 0;
  private failure: Error | null = null;
  private readonly inputs: ArrayBuffer[] = [];
  private readonly spares: ChunkBuffers[] = [];

  constructor(count: number) {
    // observations/scan-worker.js when compiled, .ts when run from the sources.
    const url = new URL(
      `./observations/scan-worker${path.extname(fileURLToPath(import.meta.url))}`,
      import.meta.url,
    );
    for (let i = 0; i < count; i++) {
      const worker = new Worker(url);
      worker.on('message', (m: { id: number; chunk: ScannedChunk }) => {
        const w = this.waiting.get(m.id);
        this.waiting.delete(m.id);
        w?.resolve(m.chunk);
      });
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`observation worker exited with code ${code}`));
      });
      this.workers.push(worker);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  scan(bytes: Uint8Array): Promise<ScannedChunk> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    const promise = new Promise<ScannedChunk>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    // Awaited in order later; a failure meanwhile must not count as an unhandled rejection.
    promise.catch(() => {});
    const spare = this.spares.pop();
    const transfer = [bytes.buffer as ArrayBuffer];
    if (spare) transfer.push(...spareTransferList(spare));
    this.workers[id % this.workers.length]!.postMessage(
      { id, bytes, maxRejected: MAX_EXAMPLES, spare },
      transfer,
    );
    return promise;
  }

  /**
   * Takes back the buffers of an applied chunk for reuse: fresh ArrayBuffers of a megabyte per
   * chunk would count as external memory and trigger a major GC every few dozen chunks.
   */
  recycle(chunk: ScannedChunk): void {
    this.inputs.push(chunk.bytes.buffer as ArrayBuffer);
    this.spares.push({ records: chunk.records, times: chunk.times, extra: chunk.extra });
  }

  /** A buffer of at least n bytes for the next chunk of input. */
  alloc(n: number): ArrayBuffer {
    const buffer = this.inputs.pop();
    return buffer && buffer.byteLength >= n ? buffer : new ArrayBuffer(Math.max(n, INPUT_BUFFER_BYTES));
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const w of this.waiting.values()) w.reject(error);
    this.waiting.clear();
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}

/**
 * Streams NDJSON observation files, in order, through one in-memory state machine: the DNS state
 * is loaded once, every file is applied, and the result is saved in one transaction at the end
 * (nothing is written if the process dies before; the rerun skips nothing and redoes the work).
 * Lines are scanned in worker threads (chunks of about 1 MiB) while this thread applies them in
 * order. Returns one summary per file; the last one also carries the load and save times.
 * `progress` is one progress for all files, or a function starting one per file (stopped after
 * the file).
 */
export async function importObservationFiles(
  db: StateDb,
  files: string[],
  progress?: Progress | ((file: string) => Progress),
  options: ObservationImportOptions = {},
): Promise<ImportSummary[]> {
  const loadStarted = performance.now();
  const machine = new DnsStateMachine(db);
  const loadSeconds = (performance.now() - loadStarted) / 1000;
  const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
  const cores = os.availableParallelism();
  const workers =
    options.workers ?? (bytes < 16 << 20 || cores < 2 ? 0 : Math.min(3, Math.max(2, cores - 1)));
  const pool = workers > 0 ? new ScanPool(workers) : null;
  const summaries: ImportSummary[] = [];
  try {
    for (const file of files) {
      const p = typeof progress === 'function' ? progress(file) : progress;
      summaries.push(await applyObservationFile(machine, file, pool, p));
      if (typeof progress === 'function') p?.stop();
    }
  } finally {
    await pool?.close();
  }
  const save = await machine.saveInParallel(workers, options.parallelSaveRows);
  if (summaries.length > 0) summaries[summaries.length - 1]!.state = { loadSeconds, save };
  return summaries;
}

async function applyObservationFile(
  machine: DnsStateMachine,
  file: string,
  pool: ScanPool | null,
  progress?: Progress,
): Promise<ImportSummary> {
  const started = performance.now();
  const counts = emptyCounts();
  const rejected: RejectedExample[] = [];
  let rejectedCount = 0;
  let read = 0;
  let lines = 0;
  const apply = (chunk: ScannedChunk): void => {
    applyScannedChunk(machine, chunk, counts);
    read += chunk.read;
    rejectedCount += chunk.rejectedCount;
    for (const r of chunk.rejected) {
      if (rejected.length < MAX_EXAMPLES) rejected.push({ file, line: lines + r.line, reason: r.reason });
    }
    lines += chunk.lines;
    progress?.tick(chunk.lines);
  };
  if (!pool) {
    for await (const bytes of readLineChunks(file)) apply(scanChunk(bytes, MAX_EXAMPLES));
  } else {
    const inFlight: Array<Promise<ScannedChunk>> = [];
    const applyNext = async (): Promise<void> => {
      const chunk = await inFlight.shift()!;
      apply(chunk);
      pool.recycle(chunk);
    };
    for await (const bytes of readLineChunks(file, (n) => pool.alloc(n))) {
      inFlight.push(pool.scan(bytes));
      if (inFlight.length >= pool.size * CHUNKS_PER_WORKER) await applyNext();
    }
    while (inFlight.length > 0) await applyNext();
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
