/**
 * Compiles the state database into a release file at `file` (which must not exist). The caller
 * (publish.ts) builds into a temp path, checks, fsyncs and renames.
 *
 * This file runs the phases in order; the tables are written by range-tables.ts (with
 * provider-ranges.ts, asn-mapping.ts, asn-table.ts), dns-tables/ and meta.ts, in this thread or
 * in the worker thread (release-worker.ts, started through worker-client.ts).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import { RELEASE_INDEXES, RELEASE_TABLES, type ReleaseTable } from '../../shared/release-schema.js';
import { collectGarbage } from './collect-garbage.js';
import { analyzeTables, writeKeyedStatistics } from './statistics.js';
import { DOMAIN_NAME_INDEX, readDomainNames, writeDomains } from './dns-tables/domains.js';
import { intervalsByValue, readIntervals, writeIntervals } from './dns-tables/intervals.js';
import { workerSummariesFrom, writeIpSummaries } from './dns-tables/ip-summaries.js';
import { PackedText } from './dns-tables/packed-text.js';
import type { BuildOptions, BuildResult } from './build-types.js';
import { describeChanges, writeHistory } from './history.js';
import { intervalWindow, writeCounts, writeMeta } from './meta.js';
import { pagesFileOf, shareIntervals, startReleaseWorker, WORKER_TABLES } from './worker-client.js';

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

  // The other CPU: a worker thread writes provider ranges, the ASN mapping, domain_page, the
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
    db.pragma('st.cache_size = -32768'); // read in order here (the worker reads dns_state too)
    for (const ddl of Object.values(RELEASE_TABLES)) db.exec(ddl);
    // One transaction per stretch of the load (no journal: a failed build is deleted, never published).
    db.exec('BEGIN');
    const names = phase('domains', () => writeDomains(db));
    const domainNames = readDomainNames(db);
    worker.post({ nameToDomain: names, domainNames });
    const intervals = phase('read intervals', () => {
      const result = readIntervals(db, names, true);
      collectGarbage();
      return result;
    });
    worker.post({ intervals: shareIntervals(intervals) });
    phase('intervals', () => writeIntervals(db, intervals));
    // Computed here since domain_page (docs/decisions/0022), but for the last addresses, which
    // the worker writes at the end of its work.
    phase('ip summaries', () => {
      const grouped = intervalsByValue(intervals, intervals.values.length);
      const { bytes, firstId } = domainNames;
      const text = new PackedText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
      const { values } = intervals;
      writeIpSummaries(
        db,
        intervals,
        grouped,
        0,
        workerSummariesFrom(values.length),
        (v) => values[v]!,
        text,
        firstId,
      );
      // The address texts (this thread's own copy) are needed no more: freed now, before the
      // index build, while the worker writes the hosting runs (the peak of the two threads).
      intervals.values.length = 0;
      collectGarbage();
    });
    const [intervalIndexes, otherIndexes] = [
      RELEASE_INDEXES.filter((ddl) => / ON dns_interval /.test(ddl)),
      RELEASE_INDEXES.filter((ddl) => !/ ON dns_interval /.test(ddl) && ddl !== DOMAIN_NAME_INDEX),
    ];
    phase('interval index', () => {
      for (const ddl of intervalIndexes) db.exec(ddl);
    });
    db.exec('COMMIT');
    // Since domain_page the worker thread usually ends last (docs/decisions/0022): this thread's
    // own tables, complete now, are analyzed while it waits; the others after the copy.
    const ownTables: ReleaseTable[] = ['domain', 'dns_interval', 'ip_summary'];
    phase("analyze this thread's tables", () => analyzeTables(db, ownTables));
    // domain_page is complete before the worker's last tables: copied in meanwhile.
    const pagesFile = pagesFileOf(workerFile);
    phase('copy domain_page', () => {
      if (!worker.pages()) return; // the worker failed: wait() below says why
      db.exec(`ATTACH DATABASE '${pagesFile.replace(/'/g, "''")}' AS pages`);
      db.exec('BEGIN');
      db.exec(`INSERT INTO main.domain_page SELECT * FROM pages.domain_page`);
      db.exec('COMMIT');
      db.exec('DETACH DATABASE pages');
      removeDatabaseFile(pagesFile);
    });
    let contributors: string[] = [];
    let lastObserved: number | null = null;
    phase('wait for the worker, copy its tables', () => {
      const result = worker.wait();
      contributors = result.contributors;
      lastObserved = result.lastObserved;
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
    const meta = phase('meta', () =>
      writeMeta(db, options, intervalWindow(intervals), lastObserved, contributors),
    );
    const history = phase('history', () =>
      writeHistory(db, {
        releaseId: options.releaseId,
        builtAt: options.builtAt,
        dnsCut: lastObserved,
        ...meta,
        retentionDays: options.historyDays,
        log: process.env.BUILDER_HISTORY_LOG ? options.log : undefined,
      }),
    );
    options.log(`    epoch ${history.epoch} (oldest kept ${history.oldest}): ${describeChanges(history)}`);
    const counts = writeCounts(db);
    db.exec('COMMIT');
    db.exec('DETACH DATABASE st');
    phase('analyze', () => {
      analyzeTables(
        db,
        (Object.keys(RELEASE_TABLES) as ReleaseTable[]).filter((table) => !ownTables.includes(table)),
      );
      writeKeyedStatistics(db, counts);
    });
    return { counts, phases };
  } finally {
    db.close();
    worker.stop();
    removeDatabaseFile(workerFile);
    removeDatabaseFile(pagesFileOf(workerFile));
  }
}

function removeDatabaseFile(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
}
