/**
 * The worker thread of buildRelease (build.ts), started by worker-client.ts: while the main
 * thread writes the domains, intervals and IP summaries, it writes into a file of its own the
 * provider ranges and the ASN mapping, then (once it has the domain ids and names) sorts the
 * names and prepares the domain_page states; once it has the intervals it writes domain_page,
 * the hosting runs, with the routing AS of every address the observed counts of the asn table,
 * and the ip_summary rows of the last addresses (ip-summaries.ts). The main thread copies its
 * tables in. Always posts one WorkerResult, then sets the shared flags the main thread waits on.
 */
import { workerData } from 'node:worker_threads';
import type { MessagePort } from 'node:worker_threads';
import type { BuildResult } from './build-types.js';
import type { WorkerInput, WorkerResult } from './worker-client.js';

const data = workerData as {
  file: string;
  pagesFile: string;
  stateFile: string;
  asnMappingPreference: string[];
  ownCategoryThreshold: number;
  builtAt: number;
  flag: Int32Array;
  input: MessagePort;
  output: MessagePort;
};

const messages: WorkerInput[] = [];
let wake: (() => void) | null = null;
data.input.on('message', (m: WorkerInput) => {
  messages.push(m);
  wake?.();
});
async function next(): Promise<WorkerInput> {
  while (messages.length === 0) await new Promise<void>((resolve) => (wake = resolve));
  return messages.shift()!;
}

let result: WorkerResult;
try {
  // Imported here: a failure to load is reported like any other.
  const { default: Database } = await import('better-sqlite3');
  const { RELEASE_TABLES } = await import('../../shared/release-schema.js');
  const { WORKER_TABLES, unshareIntervals } = await import('./worker-client.js');
  const { collectGarbage } = await import('./collect-garbage.js');
  const { writeRangeTables } = await import('./range-tables.js');
  const { pageStates, writeDomainPages } = await import('./dns-tables/domain-pages.js');
  const { intervalsByValue } = await import('./dns-tables/intervals.js');
  const { PackedText } = await import('./dns-tables/packed-text.js');
  const { writeHostingRuns } = await import('./dns-tables/domain-hosting.js');
  const { writeObserved } = await import('./dns-tables/observed-counts.js');
  const { workerSummariesFrom, writeIpSummaries } = await import('./dns-tables/ip-summaries.js');
  const phases: BuildResult['phases'] = [];
  const phase = <T>(name: string, fn: () => T): T => {
    const started = performance.now();
    const value = fn();
    phases.push({ name, seconds: (performance.now() - started) / 1000 });
    return value;
  };
  const db = new Database(data.file);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -32768'); // only appended to
    db.pragma('temp_store = FILE');
    db.exec(`ATTACH DATABASE '${data.stateFile.replace(/'/g, "''")}' AS st`);
    db.pragma('st.cache_size = -32768');
    for (const table of WORKER_TABLES) db.exec(RELEASE_TABLES[table]);
    db.exec('BEGIN');
    const { networks, contributors } = writeRangeTables(db, data, phase);
    collectGarbage();
    const first = await next();
    if (!('nameToDomain' in first)) throw new Error('expected the domain ids first');
    const { bytes, firstId } = first.domainNames;
    const names = new PackedText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    // domain_page in a file of its own (worker-client.ts pagesFileOf), closed once written.
    const pages = new Database(data.pagesFile);
    let pageOrder: ReturnType<typeof pageStates>;
    let intervals: ReturnType<typeof unshareIntervals>;
    try {
      pages.pragma('journal_mode = OFF');
      pages.pragma('synchronous = OFF');
      pages.pragma('cache_size = -32768');
      pages.pragma('temp_store = FILE');
      pages.exec(`ATTACH DATABASE '${data.stateFile.replace(/'/g, "''")}' AS st`);
      pages.exec(RELEASE_TABLES.domain_page);
      pages.exec('BEGIN');
      pageOrder = phase('page states', () => pageStates(pages, names, firstId, first.nameToDomain));
      // The map is garbage now (the names are shared with the main thread, which keeps them).
      (first as { nameToDomain?: unknown }).nameToDomain = undefined;
      const second = await next();
      if (!('intervals' in second)) throw new Error('expected the intervals second');
      intervals = unshareIntervals(second.intervals);
      const { iv, values } = intervals;
      phase('domain pages', () => writeDomainPages(pages, pageOrder, names, firstId, iv, values));
      pages.exec('COMMIT');
    } finally {
      pages.close();
    }
    Atomics.store(data.flag, 1, 1);
    Atomics.notify(data.flag, 1);
    const { iv, values } = intervals;
    // The routing AS of each address, as the hosting runs resolve it; then the per-AS counts.
    const asnOfValue = new Float64Array(values.length);
    phase('hosting runs', () => writeHostingRuns(db, networks, iv, values, asnOfValue));
    const byValue = intervalsByValue(iv, values.length);
    phase('observed counts', () => writeObserved(db, iv, byValue, asnOfValue));
    phase('ip summaries', () =>
      writeIpSummaries(
        db,
        iv,
        byValue,
        workerSummariesFrom(values.length),
        values.length,
        (v) => values.get(v),
        names,
        firstId,
      ),
    );
    db.exec('COMMIT');
    result = { phases, contributors, lastObserved: pageOrder.lastObserved };
  } finally {
    db.close();
  }
} catch (error) {
  result = { error: (error as Error).stack ?? String(error) };
}
data.input.close();
data.output.postMessage(result);
data.output.close();
// The main thread waiting for the pages after a failure goes on to read the error.
if (Atomics.load(data.flag, 1) === 0) {
  Atomics.store(data.flag, 1, 2);
  Atomics.notify(data.flag, 1);
}
Atomics.store(data.flag, 0, 1);
Atomics.notify(data.flag, 0);
