/**
 * Worker thread of saveStateInParallel (parallel-save.ts): writes the dns_state rows of its share
 * of the keys to a scratch database, reading the state machine's shared memory. workerData:
 * { file, view, order, all }. Posts { ready } once the scratch table exists, waits for a message, then
 * posts { written } after closing the file.
 */
import fs from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { DNS_STATE_TABLE } from '../state.js';
import { writeStateRows, type StateView } from './state-rows.js';

const port = parentPort;
if (!port) throw new Error('save-worker.js runs as a worker thread');
const { file, view, order, all } = workerData as {
  file: string;
  view: StateView;
  order: Int32Array;
  all: boolean;
};
for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(file + suffix, { force: true });
const db = new Database(file);
// Scratch data: a crash loses nothing that matters, so no journal and no sync.
db.pragma('journal_mode = OFF');
db.pragma('synchronous = OFF');
db.pragma('cache_size = -16384');
db.exec(DNS_STATE_TABLE);
port.postMessage({ ready: true });
port.once('message', () => {
  const written = db.transaction(() => writeStateRows(db, view, order, all, false))();
  db.close();
  port.postMessage({ written });
});
