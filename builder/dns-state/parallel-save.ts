/**
 * The save of a big DNS state with the dns_state rows bound in worker threads (save-worker.ts),
 * which read the state's shared memory; otherwise the same save as saveState, in one transaction.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { StateDb } from '../state.js';
import {
  finishSave,
  prepareSave,
  SAVE_CACHE_SIZE,
  saveState,
  step,
  writeNamesAndEnded,
  type SaveResult,
} from './save.js';
import type { StateKeys } from './state-keys.js';

/** Rows to write from which saveStateInParallel() uses worker threads (fewer: not worth starting them). */
const PARALLEL_SAVE_ROWS = 200_000;

/**
 * saveState(), with the dns_state rows written by `workers` threads when there are at least
 * `fromRows` of them: each writes its share of the keys (in key order) to a scratch database
 * next to the state (no journal, no sync); meanwhile this thread writes the names and ended
 * rows; then each share is copied in with INSERT … SELECT * (into an emptied dns_state SQLite
 * copies the records as they are). One transaction as in saveState(); the scratch files are removed.
 * Binding millions of rows costs about 3 µs each in one thread; this spreads it over the CPUs.
 */
export async function saveStateInParallel(
  db: StateDb,
  state: StateKeys,
  workers: number,
  fromRows = PARALLEL_SAVE_ROWS,
): Promise<SaveResult> {
  if (workers < 1 || state.dirtyCount < fromRows || db.memory) return saveState(db, state);
  const plan = prepareSave(state);
  const rewrite = plan.result.mode === 'rewrite';
  const view = state.view();
  const base = db.name;
  const url = new URL(`./save-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  const parts = Array.from({ length: workers }, (_, i) => {
    const from = Math.floor((plan.order.length * i) / workers);
    const to = Math.floor((plan.order.length * (i + 1)) / workers);
    return {
      file: `${base}.dns-save-${i}`,
      order: plan.order.slice(from, to),
      worker: null as Worker | null,
    };
  });
  const attached: string[] = [];
  let began = false;
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  try {
    const done = parts.map((part) => {
      const worker = new Worker(url, {
        workerData: { file: part.file, view, order: part.order, all: rewrite },
      });
      part.worker = worker;
      const messages: Array<{ ready?: boolean; written?: number }> = [];
      let wake: (() => void) | null = null;
      let failure: Error | null = null;
      worker.on('message', (m: { ready?: boolean; written?: number }) => {
        messages.push(m);
        wake?.();
      });
      worker.on('error', (error) => {
        failure = error;
        wake?.();
      });
      worker.on('exit', (code) => {
        failure ??= new Error(`dns save worker exited with code ${code}`);
        wake?.();
      });
      const next = async (): Promise<{ ready?: boolean; written?: number }> => {
        while (messages.length === 0) {
          if (failure) throw failure;
          await new Promise<void>((resolve) => (wake = resolve));
        }
        return messages.shift()!;
      };
      return next;
    });
    // Each worker has created its scratch table: attach them, then let them write.
    for (const next of done) await next();
    for (let i = 0; i < parts.length; i++) {
      db.prepare(`ATTACH DATABASE ? AS dns_save_${i}`).run(parts[i]!.file);
      attached.push(`dns_save_${i}`);
    }
    db.pragma(`cache_size = ${SAVE_CACHE_SIZE}`);
    db.exec('BEGIN');
    began = true;
    for (const part of parts) part.worker!.postMessage('write');
    writeNamesAndEnded(db, state, plan);
    for (const next of done) plan.result.states += (await next()).written!;
    if (rewrite) db.prepare(`DELETE FROM dns_state`).run();
    for (const name of attached) {
      db.exec(`INSERT ${rewrite ? '' : 'OR REPLACE '}INTO main.dns_state SELECT * FROM ${name}.dns_state`);
    }
    step(plan, 'states');
    db.exec('COMMIT');
    began = false;
    step(plan, 'commit');
    plan.result.partitions = parts.length;
  } finally {
    if (began) db.exec('ROLLBACK');
    db.pragma(`cache_size = ${cacheSize}`);
    for (const name of attached) db.exec(`DETACH DATABASE ${name}`);
    await Promise.all(parts.map((part) => part.worker?.terminate()));
    for (const part of parts) {
      for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(part.file + suffix, { force: true });
    }
  }
  return finishSave(state, plan);
}
