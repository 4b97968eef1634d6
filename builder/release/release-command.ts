/** `builder release` and `builder prune`: lock, build, check, publish; delete old files. */
import fs from 'node:fs';
import path from 'node:path';
import type { Settings } from '../../shared/config.js';
import { nowEpoch } from '../../shared/time.js';
import { openState, statePath, type StateDb } from '../state.js';
import { recordHistory } from './history-state.js';
import { buildRelease } from './build.js';
import { gateRelease, ReleaseRefusedError, type ReleaseDrop } from './release-gate.js';
import {
  acquireLock,
  checkReleaseFile,
  cleanLeftovers,
  currentReleaseFile,
  listReleaseFiles,
  nextReleaseId,
  publishFile,
  tempReleasePath,
} from './publish.js';

/**
 * Builds, checks and publishes a release. Throws ReleaseRefusedError (the built file removed,
 * CURRENT untouched) when the quality gate refuses it and `force` is not set; `forced` lists the
 * drops a forced release was published with.
 */
export function publishRelease(
  settings: Settings,
  options: {
    dataset: 'production' | 'demo';
    force?: boolean;
    log?: (line: string) => void;
    /** The build's clock (epoch seconds; default now): its release id and built_at (tests). */
    now?: number;
  },
): { id: string; file: string; counts: Record<string, number>; forced: ReleaseDrop[] } {
  const log = options.log ?? ((line: string) => console.log(line));
  const releasesDir = settings.RELEASES_DIR;
  const release = acquireLock(releasesDir);
  try {
    // The build reads the state file directly: a state of an earlier version is upgraded first
    // (and one of an unknown version refused, untouched), as every other command does.
    // The state's history catches up with CURRENT's first, when a builder stopped between a
    // publish and its copy into the state (history-state.ts).
    if (fs.existsSync(statePath(settings.STATE_DIR))) {
      withState(settings.STATE_DIR, (state) => {
        const current = currentReleaseFile(releasesDir);
        const added = current && fs.existsSync(current) ? recordHistory(state, current, false) : 0;
        if (added > 0) log(`the state's history caught up with ${path.basename(current!)} (${added} epochs)`);
      });
    }
    const leftovers = cleanLeftovers(releasesDir);
    if (leftovers.length > 0) log(`removed leftovers of an interrupted run: ${leftovers.join(', ')}`);
    const started = performance.now();
    const { id, builtAt } = nextReleaseId(releasesDir, options.now ?? nowEpoch());
    const temp = tempReleasePath(releasesDir, id);
    log(`building release ${id}`);
    const { counts } = buildRelease(temp, {
      stateFile: path.resolve(statePath(settings.STATE_DIR)),
      releaseId: id,
      builtAt,
      asnMappingPreference: settings.ASN_MAPPING.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      dataset: options.dataset,
      ownCategoryThreshold: settings.OWN_CATEGORY_THRESHOLD,
      historyDays: settings.RELEASE_HISTORY_DAYS,
      log,
    });
    const checkStarted = performance.now();
    checkReleaseFile(temp, id);
    log(`  check: ${((performance.now() - checkStarted) / 1000).toFixed(1)} s`);
    const limits = { routed: settings.RELEASE_MAX_ROUTED_DROP, answers: settings.RELEASE_MAX_ANSWER_DROP };
    const gate = gateRelease(id, temp, currentReleaseFile(releasesDir), limits, log);
    if (gate.line) log(gate.line);
    if (gate.drops.length > 0 && !options.force) {
      fs.rmSync(temp, { force: true });
      throw new ReleaseRefusedError(gate.message, gate.drops);
    }
    if (gate.drops.length > 0) log(`  publishing all the same (--force): ${gate.summary}`);
    const publishStarted = performance.now();
    const file = publishFile(releasesDir, temp, id);
    log(`  fsync and publish: ${((performance.now() - publishStarted) / 1000).toFixed(1)} s`);
    const historyStarted = performance.now();
    withState(settings.STATE_DIR, (state) => recordHistory(state, file, true));
    log(`  history into the state: ${((performance.now() - historyStarted) / 1000).toFixed(1)} s`);
    const seconds = (performance.now() - started) / 1000;
    const size = fs.statSync(file).size;
    log(
      `published ${file} (${(size / 1048576).toFixed(1)} MiB) in ${seconds.toFixed(1)} s; CURRENT -> ${path.basename(file)}`,
    );
    log(
      `rows: ${Object.entries(counts)
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')}`,
    );
    return { id, file, counts, forced: gate.drops };
  } finally {
    release();
  }
}

function withState<T>(stateDir: string, fn: (state: StateDb) => T): T {
  const state = openState(stateDir);
  try {
    return fn(state);
  } finally {
    state.close();
  }
}

export function pruneReleases(
  releasesDir: string,
  keep: number,
  log: (line: string) => void = console.log,
): string[] {
  const release = acquireLock(releasesDir);
  try {
    const current = currentReleaseFile(releasesDir);
    const files = listReleaseFiles(releasesDir);
    const keepSet = new Set(files.slice(Math.max(0, files.length - keep)));
    if (current) keepSet.add(path.basename(current));
    const removed: string[] = [];
    for (const name of files) {
      if (keepSet.has(name)) continue;
      fs.rmSync(path.join(releasesDir, name));
      removed.push(name);
    }
    log(removed.length > 0 ? `removed ${removed.join(', ')}` : 'nothing to remove');
    return removed;
  } finally {
    release();
  }
}
