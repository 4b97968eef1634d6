/**
 * After a release is published, its history becomes the state's (builder/state.ts release_epoch
 * and *_hist): the epochs and versions the release added or closed since the state's last epoch
 * are copied in, and what the release's retention dropped is dropped. Only what changed moves:
 * the versions with e_from or e_to after the state's last epoch.
 *
 * The copy is idempotent, so it is also how a state catches up after a builder stopped between
 * the publish and this copy: publishRelease first copies from the release CURRENT names when that
 * release continues the state's history (its epoch of the state's last number has the same
 * release id) and holds more.
 */
import Database from 'better-sqlite3';
import { stateHistoryTable, type StateDb } from '../state.js';
import { VERSIONED_TABLES } from './history.js';

/**
 * Copies into the state what `releaseFile` holds beyond the state's last epoch; returns the
 * epochs added (0: the release holds nothing newer, or is not a continuation of the state).
 * `fresh`: the release was just built from this state (its epochs continue it by construction).
 */
export function recordHistory(state: StateDb, releaseFile: string, fresh: boolean): number {
  const last = state
    .prepare(`SELECT epoch, release_id FROM release_epoch ORDER BY epoch DESC LIMIT 1`)
    .get() as { epoch: number; release_id: string } | undefined;
  const release = new Database(releaseFile, { readonly: true, fileMustExist: true });
  let newest: number;
  try {
    const hasEpochs = release
      .prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'epoch'`)
      .get();
    if (!hasEpochs) return 0;
    newest = (release.prepare(`SELECT max(epoch) FROM epoch`).pluck().get() as number | null) ?? 0;
    if (!fresh) {
      // Only a continuation of this state's history: the state's last epoch, as the release holds it.
      if (!last) return 0;
      const same = release.prepare(`SELECT release_id FROM epoch WHERE epoch = ?`).pluck().get(last.epoch);
      if (same !== last.release_id) return 0;
    }
  } finally {
    release.close();
  }
  const since = last?.epoch ?? 0;
  if (newest <= since) return 0;
  state.prepare(`ATTACH DATABASE ? AS rel`).run(releaseFile);
  try {
    state.transaction(() => {
      const oldest = state.prepare(`SELECT min(epoch) FROM rel.epoch`).pluck().get() as number;
      state
        .prepare(`INSERT OR REPLACE INTO main.release_epoch SELECT * FROM rel.epoch WHERE epoch > ?`)
        .run(since);
      state.prepare(`DELETE FROM main.release_epoch WHERE epoch < ?`).run(oldest);
      for (const table of VERSIONED_TABLES) {
        const own = stateHistoryTable(table);
        state
          .prepare(
            `INSERT OR REPLACE INTO main.${own} SELECT * FROM rel.${table} WHERE e_from > ? OR e_to > ?`,
          )
          .run(since, since);
        state.prepare(`DELETE FROM main.${own} WHERE e_to <= ?`).run(oldest);
      }
    })();
  } finally {
    state.exec(`DETACH DATABASE rel`);
  }
  return newest - since;
}
