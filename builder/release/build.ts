/**
 * Compiles the state database into a release file at `file` (which must not exist). The caller
 * (publish.ts) builds into a temp path, checks, fsyncs and renames.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import { parseIp } from '../../shared/ip.js';
import { findIpBogon } from '../../shared/bogons.js';
import {
  META_KEYS,
  RELEASE_INDEXES,
  RELEASE_SCHEMA_VERSION,
  RELEASE_TABLES,
  SEMANTICS,
} from '../../shared/release-schema.js';
import { toIso } from '../../shared/time.js';
import { getSource } from '../sources/index.js';
import { layerMappings, readMappingRows, writeMapping } from './asn-mapping.js';
import { writeAsnTable } from './asn-table.js';
import { writeProviderRanges, type ProviderRanges } from './provider-ranges.js';
import type { RangeTable } from './range-table.js';
import { buildHostingRuns, encodeRun, type IntervalOnNetwork, type NetworkInfo } from './hosting-runs.js';
import {
  BatchInsert,
  collectGarbage,
  readIntervals,
  readNameMap,
  writeIntervals,
  PackedText,
  type IntervalArrays,
  type Intervals,
} from './dns-tables.js';

export interface BuildOptions {
  stateFile: string;
  releaseId: string;
  builtAt: number;
  /** Preference order of IP-to-ASN mapping sources: layered per address (asn-mapping.ts). */
  asnMappingPreference: string[];
  /** 'demo' labels the release as demo data in its coverage block. */
  dataset: 'production' | 'demo';
  /** Share of an AS's routed IPv4 space that published cloud/hosting/CDN ranges must cover for our own category. */
  ownCategoryThreshold: number;
  log: (line: string) => void;
}

export interface BuildResult {
  counts: Record<string, number>;
  phases: Array<{ name: string; seconds: number }>;
}

export function buildRelease(file: string, options: BuildOptions): BuildResult {
  const phases: BuildResult['phases'] = [];
  const phase = <T>(name: string, fn: () => T): T => {
    const started = performance.now();
    const result = fn();
    const seconds = (performance.now() - started) / 1000;
    phases.push({ name, seconds });
    const m = process.memoryUsage();
    options.log(
      `  ${name}: ${seconds.toFixed(1)} s` +
        (process.env.BUILDER_MEMORY_LOG
          ? ` (rss ${m.rss >> 20} heap ${m.heapUsed >> 20} buffers ${m.arrayBuffers >> 20} MiB)`
          : ''),
    );
    return result;
  };

  // The other CPU: a worker thread writes provider ranges, the ASN mapping, dns_state, the
  // hosting runs and the per-AS observed counts into a file of its own (release-worker.ts); its
  // tables are copied in at the end.
  const workerFile = `${file}.part`;
  const worker = startReleaseWorker(workerFile, options);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -98304'); // 96 MiB: the domain name index and the interval index are built in it
    db.pragma('temp_store = FILE');
    db.exec(`ATTACH DATABASE '${options.stateFile.replace(/'/g, "''")}' AS st`);
    db.pragma('st.cache_size = -32768'); // read in order here (the worker reads dns_state by key)
    for (const ddl of Object.values(RELEASE_TABLES)) db.exec(ddl);
    // One transaction per stretch of the load (no journal: a failed build is deleted, never published).
    db.exec('BEGIN');
    const names = phase('domains', () => writeDomains(db));
    worker.post({ nameToDomain: names });
    const intervals = phase('read intervals', () => {
      const result = readIntervals(db, names, true);
      collectGarbage();
      return result;
    });
    worker.post({ intervals: shareIntervals(intervals), domainNames: readDomainNames(db) });
    phase('intervals', () => writeIntervals(db, intervals));
    // The worker computes the summaries (the samples' JSON) while this thread writes the intervals.
    phase('ip summaries', () => {
      writeIpSummary(db, intervals.values, worker.summaries);
      // The address texts (this thread's own copy) are needed no more: freed now, before the
      // index build, while the worker writes the hosting runs (the peak of the two threads).
      intervals.values.length = 0;
      collectGarbage();
    });
    const [intervalIndexes, otherIndexes] = [
      RELEASE_INDEXES.filter((ddl) => / ON dns_interval /.test(ddl)),
      RELEASE_INDEXES.filter((ddl) => !/ ON dns_interval /.test(ddl)),
    ];
    phase('interval index', () => {
      for (const ddl of intervalIndexes) db.exec(ddl);
    });
    db.exec('COMMIT');
    let contributors: string[] = [];
    phase('wait for the worker, copy its tables', () => {
      const result = worker.wait();
      contributors = result.contributors;
      for (const p of result.phases) {
        phases.push(p);
        options.log(`    ${p.name} (worker thread): ${p.seconds.toFixed(1)} s`);
      }
      db.exec(`ATTACH DATABASE '${workerFile.replace(/'/g, "''")}' AS part`);
      db.exec('BEGIN');
      // Into empty tables declared alike, SQLite copies the records as they are.
      for (const table of WORKER_TABLES) db.exec(`INSERT INTO main.${table} SELECT * FROM part.${table}`);
      db.exec('COMMIT');
      db.exec('DETACH DATABASE part');
    });
    removeDatabaseFile(workerFile);
    db.exec('BEGIN');
    phase('indexes', () => {
      for (const ddl of otherIndexes) db.exec(ddl);
    });
    db.exec(`INSERT INTO ptr SELECT ip, names, status, checked_at, last_confirmed FROM st.ptr`);
    const counts = phase('meta', () => writeMeta(db, options, intervalWindow(intervals), contributors));
    db.exec('COMMIT');
    db.exec('DETACH DATABASE st');
    phase('analyze', () => db.exec('ANALYZE'));
    return { counts, phases };
  } finally {
    db.close();
    worker.stop();
    removeDatabaseFile(workerFile);
  }
}

/** The tables the worker thread writes. */
export const WORKER_TABLES = [
  'provider_range',
  'provider_segment',
  'asn_range',
  'asn_segment',
  'asn',
  'dns_state',
  'domain_hosting',
] as const;

function removeDatabaseFile(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
}

/** Intervals as the worker receives them: the arrays in shared memory, the addresses packed. */
export interface SharedIntervals extends Omit<Intervals, 'values'> {
  /** The addresses, newline-separated (PackedText bytes). */
  valuesText: Uint8Array;
}

function shareIntervals(iv: Intervals): SharedIntervals {
  const { values, ...arrays } = iv;
  return { ...arrays, valuesText: PackedText.of(values).bytes };
}

export function unshareIntervals(shared: SharedIntervals): { iv: IntervalArrays; values: PackedText } {
  const { valuesText, ...arrays } = shared;
  return {
    iv: arrays,
    values: new PackedText(Buffer.from(valuesText.buffer, valuesText.byteOffset, valuesText.length)),
  };
}

/** Messages from buildRelease to the worker, in this order. */
export type WorkerInput =
  { nameToDomain: Int32Array } | { intervals: SharedIntervals; domainNames: SharedDomainNames };

/** The domain names in id order (ids are consecutive from firstId), in shared memory. */
interface SharedDomainNames {
  firstId: number;
  /** The names, newline-separated (PackedText bytes). */
  bytes: Uint8Array;
}

/** Addresses per IpSummaries message: a few MB each, written and dropped one after another. */
export const IP_SUMMARY_CHUNK = 1 << 18;

/**
 * The columns of ip_summary for the addresses [from, to) (value numbers, in byte order), which the
 * worker computes from the intervals and posts in chunks (the buffers transferred) before it
 * writes the hosting runs.
 */
interface IpSummaries {
  from: number;
  to: number;
  currentCount: Int32Array;
  first: Float64Array;
  last: Float64Array;
  /** The sample texts (JSON arrays of up to 10 names), newline-separated (PackedText bytes). */
  samples: Uint8Array;
}

/**
 * What the worker sends back (release-worker.ts): first { summaries } chunks (flag 1 counts them),
 * then the result (flag 0 set). After a failure the result, with flag 1 set past any count.
 */
export interface WorkerResult {
  error?: string;
  phases?: BuildResult['phases'];
  /** RangeTables.contributors. */
  contributors?: string[];
}

/**
 * Starts release-worker.ts on `file`. buildRelease is synchronous: summaries() and wait() block on
 * shared flags the worker sets once the message is posted (both are set on failure too).
 */
function startReleaseWorker(
  file: string,
  options: BuildOptions,
): {
  post: (m: WorkerInput) => void;
  /** The chunk after `received` chunks (waits for it). */
  summaries: (received: number) => IpSummaries;
  wait: () => Required<Pick<WorkerResult, 'phases' | 'contributors'>>;
  stop: () => void;
} {
  const flag = new Int32Array(new SharedArrayBuffer(8));
  const toWorker = new MessageChannel();
  const fromWorker = new MessageChannel();
  const url = new URL(`./release-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  const worker = new Worker(url, {
    workerData: {
      file,
      stateFile: options.stateFile,
      asnMappingPreference: options.asnMappingPreference,
      ownCategoryThreshold: options.ownCategoryThreshold,
      builtAt: options.builtAt,
      flag,
      input: toWorker.port2,
      output: fromWorker.port2,
    },
    transferList: [toWorker.port2, fromWorker.port2],
  });
  worker.unref();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    toWorker.port1.close();
    fromWorker.port1.close();
    void worker.terminate();
  };
  return {
    stop,
    post: (m) => toWorker.port1.postMessage(m),
    summaries: (received) => {
      Atomics.wait(flag, 1, received);
      const m = receiveMessageOnPort(fromWorker.port1)?.message as
        { summaries: IpSummaries } | WorkerResult | undefined;
      if (m && 'summaries' in m) return m.summaries;
      stop();
      throw new Error(`release worker: ${m?.error ?? 'no ip summaries'}`);
    },
    wait: () => {
      Atomics.wait(flag, 0, 0);
      const m = receiveMessageOnPort(fromWorker.port1)?.message as WorkerResult | undefined;
      stop();
      if (!m || m.error !== undefined) throw new Error(`release worker: ${m?.error ?? 'no result'}`);
      return { phases: m.phases!, contributors: m.contributors! };
    },
  };
}

/** What writeRangeTables gives the rest of the build. */
export interface RangeTables {
  networks: NetworkResolver;
  /** Sources whose rows or values the tables use (feeds, mappings, AS metadata): for attribution. */
  contributors: string[];
}

/** Writes provider_range, provider_segment, asn_range, asn_segment and asn. */
export function writeRangeTables(
  db: Database.Database,
  options: Pick<BuildOptions, 'asnMappingPreference' | 'ownCategoryThreshold' | 'builtAt'>,
  phase: <T>(name: string, fn: () => T) => T,
): RangeTables {
  const ranges = phase('provider ranges', () => writeProviderRanges(db, options.builtAt));
  const mapping = phase('asn mapping', () =>
    layerMappings(readMappingRows(db, options.asnMappingPreference)),
  );
  const asnTable = phase('asn ranges', () => writeMapping(db, mapping));
  const metaSources = phase('asn table', () =>
    writeAsnTable(db, mapping, ranges.hostingRanges, options.ownCategoryThreshold),
  );
  const contributors = new Set([...ranges.sources, ...metaSources]);
  for (const row of mapping.rows) contributors.add(row.source);
  return { networks: new NetworkResolver(db, asnTable, ranges), contributors: [...contributors].sort() };
}

/** The domain table (ids in seed-rank order, then other observed names); returns dns_name id -> domain id. */
export function writeDomains(db: Database.Database): Int32Array {
  db.exec(`
    CREATE TEMP TABLE resolved AS
      SELECT domain AS name, rank, 0 AS www FROM st.seed
      UNION ALL SELECT 'www.' || domain, rank, 1 FROM st.seed WHERE domain NOT LIKE 'www.%';
    INSERT OR IGNORE INTO domain (name, rank, in_seed) SELECT name, rank, 1 FROM resolved ORDER BY rank, www, name;
    DROP TABLE temp.resolved;
  `);
  // Usually every observed name is a seed name or its www. name: the map of the seed domains
  // then covers all of dns_name, and the names need not be looked up twice.
  const seedOnly = readNameMap(db);
  let mapped = 0;
  for (let nameId = 1; nameId < seedOnly.length; nameId++) if (seedOnly[nameId] !== 0) mapped++;
  if (mapped === (db.prepare(`SELECT count(*) FROM st.dns_name`).pluck().get() as number)) return seedOnly;
  db.exec(
    `INSERT OR IGNORE INTO domain (name, rank, in_seed) SELECT name, NULL, 0 FROM st.dns_name ORDER BY name`,
  );
  return readNameMap(db);
}

/**
 * dns_state in (domain id, record type) order: the state's rows read in their own (name id) order,
 * each given its domain id from a temp table keyed by name id, then sorted by SQLite. Looking each
 * domain's rows up in the state by key instead (no sort) read the state's pages at random and
 * took half as long again (10.1 s against 6.6 s for 4 million rows).
 */
export function writeStates(db: Database.Database, nameToDomain: Int32Array): void {
  db.exec(`CREATE TEMP TABLE name_domain (name_id INTEGER PRIMARY KEY, domain_id INTEGER NOT NULL)`);
  const insert = new BatchInsert(
    db,
    2,
    (rows) => `INSERT INTO temp.name_domain (name_id, domain_id) VALUES ${rows}`,
  );
  for (let nameId = 1; nameId < nameToDomain.length; nameId++)
    if (nameToDomain[nameId] !== 0) insert.row(nameId, nameToDomain[nameId]);
  insert.flush();
  // CROSS JOIN: the state is the outer loop, read in order. The sorter keeps up to a page cache's
  // worth of rows in memory before it writes a run to a temp file: small caches here (8 MiB, as
  // fast as 32) keep the memory down while the main thread reads the intervals.
  const caches = [db.pragma('cache_size', { simple: true }), db.pragma('st.cache_size', { simple: true })];
  db.pragma('cache_size = -8192');
  db.pragma('st.cache_size = -8192');
  db.exec(`
    INSERT INTO dns_state SELECT m.domain_id, s.rtype, s.outcome, s.good_outcome, s.vals, s.cnames, s.last_observed,
      s.last_confirmed, s.last_positive FROM st.dns_state s CROSS JOIN temp.name_domain m ON m.name_id = s.name_id
      ORDER BY m.domain_id, s.rtype;
    DROP TABLE temp.name_domain;
  `);
  db.pragma(`cache_size = ${caches[0] as number}`);
  db.pragma(`st.cache_size = ${caches[1] as number}`);
}

/** Network (routing ASN + cloud/hosting/CDN provider under this release) of an address. */
export class NetworkResolver {
  private readonly byKey = new Map<string, NetworkInfo>();
  private readonly asnInfo = new Map<number, { name: string | null; category: string | null }>();
  static readonly BOGON: NetworkInfo = {
    key: 'bogon',
    public: false,
    asn: null,
    asName: null,
    provider: null,
    category: null,
  };

  constructor(
    db: Database.Database,
    private readonly asnTable: RangeTable<{ asn: number | null }>,
    private readonly ranges: Pick<ProviderRanges, 'hostingByAddress'>,
  ) {
    const rows = db.prepare(`SELECT asn, name, category FROM asn`).all() as Array<{
      asn: number;
      name: string | null;
      category: string | null;
    }>;
    for (const row of rows) this.asnInfo.set(row.asn, { name: row.name, category: row.category });
  }

  of(value: string): NetworkInfo {
    const ip = parseIp(value);
    if (!ip || findIpBogon(ip)) return NetworkResolver.BOGON;
    const asn = this.asnTable.find(ip.version, ip.value)?.asn ?? null;
    const hosting = this.ranges.hostingByAddress.find(ip.version, ip.value);
    const as = asn !== null ? this.asnInfo.get(asn) : undefined;
    // The category is part of the identity: otherwise an AS+provider pair with ranges of two
    // categories (AWS CloudFront and EC2 in one AS) would take the category of whichever
    // address happened to be looked up first.
    const key = `${asn}|${hosting?.provider ?? ''}|${hosting?.category ?? as?.category ?? ''}`;
    let info = this.byKey.get(key);
    if (!info) {
      info = {
        key,
        public: true,
        asn,
        asName: as?.name ?? null,
        provider: hosting?.provider ?? null,
        category: hosting?.category ?? as?.category ?? null,
      };
      this.byKey.set(key, info);
    }
    return info;
  }
}

/**
 * Per address the summary of the IP lookup's `domains` block; addresses in byte order, their
 * columns as the worker posts them (`next(k)`: the chunk after k chunks).
 */
function writeIpSummary(db: Database.Database, values: string[], next: (k: number) => IpSummaries): void {
  const insert = new BatchInsert(
    db,
    5,
    (rows) =>
      `INSERT INTO ip_summary (value, current_count, sample, first_observed, last_confirmed) VALUES ${rows}`,
  );
  for (let v = 0, k = 0; v < values.length; k++) {
    const { from, to, currentCount, first, last, samples: bytes } = next(k);
    const samples = new PackedText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    if (from !== v || samples.length !== to - from) throw new Error(`ip summaries ${from}..${to} at ${v}`);
    for (; v < to; v++)
      insert.row(values[v], currentCount[v - from], samples.get(v - from), first[v - from], last[v - from]);
  }
  insert.flush();
}

/**
 * The columns of ip_summary per value (run by the worker thread): the number of domains with a
 * current interval on the address, the first 10 of them (by id) as a JSON array of names, and
 * the earliest first_observed and latest last_confirmed of all its intervals.
 */
export function summarizeIps(
  iv: IntervalArrays,
  byValue: { start: Int32Array; rows: Int32Array },
  from: number,
  to: number,
  text: PackedText,
  firstId: number,
): IpSummaries {
  const { start, rows } = byValue;
  const currentCount = new Int32Array(to - from);
  const firstOf = new Float64Array(to - from);
  const lastOf = new Float64Array(to - from);
  // About 30 bytes per address at full scale; grown by half when short.
  let bytes = Buffer.from(new ArrayBuffer((to - from) * 32 + 4096));
  let used = 0;
  const room = (n: number): void => {
    if (used + n <= bytes.length) return;
    const bigger = Buffer.from(new ArrayBuffer(Math.max(Math.ceil(bytes.length * 1.5), used + n)));
    bytes.copy(bigger, 0, 0, used);
    bytes = bigger;
  };
  // Names that JSON.stringify leaves as they are (printable ASCII, no quote or backslash) are
  // copied byte for byte between quotes: no string per name.
  const copy = text.isJsonSafe();
  const ids: number[] = [];
  for (let v = from; v < to; v++) {
    let first = Infinity;
    let last = 0;
    currentDomains(iv, rows, start[v]!, start[v + 1]!, ids);
    for (let r = start[v]!; r < start[v + 1]!; r++) {
      const i = rows[r]!;
      if (iv.first[i]! < first) first = iv.first[i]!;
      if (iv.last[i]! > last) last = iv.last[i]!;
    }
    const n = Math.min(ids.length, 10);
    if (copy) {
      let size = 3;
      for (let k = 0; k < n; k++) size += text.byteLength(ids[k]! - firstId) + 3;
      room(size);
      if (v > from) bytes[used++] = 10; // '\n'
      bytes[used++] = 91; // '['
      for (let k = 0; k < n; k++) {
        if (k > 0) bytes[used++] = 44; // ','
        bytes[used++] = 34; // '"'
        used = text.copyTo(ids[k]! - firstId, bytes, used);
        bytes[used++] = 34;
      }
      bytes[used++] = 93; // ']'
    } else {
      let sample = v > from ? '\n[' : '[';
      for (let k = 0; k < n; k++)
        sample += `${k > 0 ? ',' : ''}${JSON.stringify(text.get(ids[k]! - firstId))}`;
      sample += ']';
      room(sample.length * 3);
      used += bytes.write(sample, used, 'utf8');
    }
    currentCount[v - from] = ids.length;
    firstOf[v - from] = first;
    lastOf[v - from] = last;
  }
  return {
    from,
    to,
    currentCount,
    first: firstOf,
    last: lastOf,
    samples: new Uint8Array(bytes.buffer, 0, used),
  };
}

/** The domain names in id order (ids are consecutive), in shared memory. */
function readDomainNames(db: Database.Database): SharedDomainNames {
  const firstId = (db.prepare(`SELECT coalesce(min(id), 1) FROM domain`).pluck().get() as number) ?? 1;
  const chunk = db.prepare(
    `SELECT count(*), max(id), group_concat(name, char(10)) FROM (SELECT id, name FROM domain WHERE id > ? ORDER BY id LIMIT 65536)`,
  );
  const parts: string[] = [];
  let after = -1;
  for (;;) {
    const [count, last, text] = chunk.raw().get(after) as [number, number | null, string | null];
    if (count === 0) break;
    parts.push(text!);
    after = last!;
  }
  const joined = parts.join('\n');
  const bytes = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(joined)));
  bytes.write(joined, 0, 'utf8');
  return { firstId, bytes };
}

/** Domain ids (ascending, distinct) with a current interval among rows[from, to) of one value. */
function currentDomains(iv: IntervalArrays, rows: Int32Array, from: number, to: number, ids: number[]): void {
  ids.length = 0;
  for (let r = from; r < to; r++) {
    const i = rows[r]!;
    const e = iv.ended[i]!;
    // Rows of a value come in domain order: a repeated domain is the previous one.
    if (e !== e && ids[ids.length - 1] !== iv.domain[i]) ids.push(iv.domain[i]!);
  }
}

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
  if (db.prepare(`SELECT EXISTS (SELECT 1 FROM dns_state)`).pluck().get() !== 1) return;
  const update = db.prepare(`UPDATE asn SET observed_ips = ?, observed_domains = ? WHERE asn = ?`);
  db.exec(`UPDATE asn SET observed_ips = 0, observed_domains = 0`);
  for (const [asn, ips] of observedIps) update.run(ips, observedDomains.get(asn)!.size, asn);
}

/** Hosting runs, domain by domain (the intervals are in domain order). */
export function writeHostingRuns(
  db: Database.Database,
  networks: NetworkResolver,
  iv: IntervalArrays,
  values: PackedText,
  asnOfValue: Float64Array,
): void {
  const insert = new BatchInsert(
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

/**
 * min(first_observed) and max(last_confirmed) of dns_interval (null when it is empty), from the
 * intervals in memory: the same rows, without a scan of the table.
 */
function intervalWindow(iv: IntervalArrays): { first: number | null; last: number | null } {
  if (iv.count === 0) return { first: null, last: null };
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < iv.count; i++) {
    if (iv.first[i]! < first) first = iv.first[i]!;
    if (iv.last[i]! > last) last = iv.last[i]!;
  }
  return { first, last };
}

function writeMeta(
  db: Database.Database,
  options: BuildOptions,
  window: { first: number | null; last: number | null },
  contributors: string[],
): Record<string, number> {
  const lastQuery = db.prepare(`SELECT max(last_observed) FROM dns_state`).pluck().get() as number | null;
  const seedSnapshot = db
    .prepare(`SELECT files FROM st.source_snapshot WHERE kind = 'seed'`)
    .pluck()
    .get() as string | undefined;
  const seedNames = db.prepare(`SELECT count(*) FROM st.seed`).pluck().get() as number;
  const derived = db
    .prepare(`SELECT count(*) FROM domain WHERE in_seed = 1 AND name LIKE 'www.%'`)
    .pluck()
    .get() as number;
  const ptrChecked = db.prepare(`SELECT count(*) FROM ptr`).pluck().get() as number;
  const ptrObserved = db
    .prepare(`SELECT count(*) FROM ptr WHERE status = 'positive'`)
    .pluck()
    .get() as number;
  const seedFile = seedSnapshot
    ? ((JSON.parse(seedSnapshot) as Array<{ file: string }>)[0]?.file ?? null)
    : null;
  const coverage: Record<string, unknown> = {
    observation_window: {
      first: window.first !== null ? toIso(window.first) : null,
      last: lastQuery !== null ? toIso(Math.max(lastQuery, window.last ?? 0)) : null,
    },
    vantage_count: 1,
    record_types: ['A', 'AAAA'],
    seed: {
      source:
        options.dataset === 'demo'
          ? 'demo seed (reserved example domains)'
          : seedFile
            ? `tranco (${seedFile})`
            : 'none',
      names: seedNames,
    },
    derived: { www_names: derived },
    semantics: SEMANTICS,
  };
  if (ptrChecked > 0) coverage.ptr = { checked_ips: ptrChecked, observed_ips: ptrObserved };
  if (options.dataset === 'demo') {
    coverage.dataset = 'demo';
    coverage.note =
      'DEMO DATA: names under reserved example domains with generated observations; ranges are real published excerpts';
  }
  const snapshots = db.prepare(`SELECT * FROM st.source_snapshot ORDER BY source`).all() as Array<{
    source: string;
    kind: string;
    origin: string;
    imported_at: number;
    published_at: string | null;
    files: string;
    records: number;
    rejected: number;
  }>;
  const sources = snapshots.map((s) => ({
    source: s.source,
    kind: s.kind,
    origin: s.origin,
    imported_at: toIso(s.imported_at),
    published_at: s.published_at,
    records: s.records,
    rejected: s.rejected,
    files: (
      JSON.parse(s.files) as Array<{
        file: string;
        url?: string;
        sha256: string;
        bytes: number;
        fetched_at: number;
      }>
    ).map((f) => ({
      ...f,
      fetched_at: toIso(f.fetched_at),
    })),
  }));
  // Credit exactly the sources the release's answers rest on: DNS observations when there are
  // any, the seed list when it names the resolved set, and the feeds, mappings and AS metadata
  // whose rows or values the tables use (an imported source the release does not use is not
  // credited).
  const observed = (db.prepare(`SELECT EXISTS (SELECT 1 FROM dns_state)`).pluck().get() as number) === 1;
  const used = new Set(contributors);
  // The demo's seed is our own list of reserved example names, read with the Tranco parser.
  if (seedNames > 0 && options.dataset !== 'demo')
    for (const s of snapshots) if (s.kind === 'seed') used.add(s.source);
  const attribution = [
    ...(observed || ptrChecked > 0
      ? [
          {
            source: 'DNS observations and PTR names',
            by: 'measured by this service',
            license: 'same as the service data',
          },
        ]
      : []),
    ...snapshots.flatMap((s) => {
      const def = getSource(s.source);
      return def && used.has(s.source) ? [def.attribution] : [];
    }),
  ];
  const counts: Record<string, number> = {};
  for (const table of Object.keys(RELEASE_TABLES)) {
    if (table === 'meta') continue;
    counts[table] = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  }
  const insert = db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?)`);
  db.transaction(() => {
    insert.run(META_KEYS.schemaVersion, String(RELEASE_SCHEMA_VERSION));
    insert.run(META_KEYS.releaseId, options.releaseId);
    insert.run(META_KEYS.builtAt, toIso(options.builtAt));
    insert.run(META_KEYS.coverage, JSON.stringify(coverage));
    insert.run(META_KEYS.attribution, JSON.stringify(attribution));
    insert.run(META_KEYS.sources, JSON.stringify(sources));
    insert.run(META_KEYS.counts, JSON.stringify(counts));
  })();
  return counts;
}
