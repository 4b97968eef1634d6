/**
 * Runs a dated history (dated-history.ts) through the builder, in this process, each step at its
 * own instant: `importSnapshot` with the import's time, the rounds' NDJSON files through
 * `importObservationFiles`, `publishRelease` with the release's time as its `now`. Every release
 * file is copied aside as it is published (the releases directory is the builder's), so a test can
 * open the release that was current at any moment and the newest one.
 */
import fs from 'node:fs';
import path from 'node:path';
import { loadSettings } from '../../shared/config.js';
import { describeFile, importObservationFiles, importSnapshot } from '../../builder/importer.js';
import { publishRelease } from '../../builder/release/release-command.js';
import { getSource } from '../../builder/sources/index.js';
import { openState } from '../../builder/state.js';
import type { DatedHistory } from './dated-history.js';

export interface BuiltRelease {
  id: string;
  /** The instant it was built at (its built_at, epoch seconds). */
  builtAt: number;
  /** The kept copy of its file. */
  file: string;
}

/** Builds every release of `history` under `dir` (state/, releases/, inputs/, kept/). */
export async function buildDatedReleases(history: DatedHistory, dir: string): Promise<BuiltRelease[]> {
  const stateDir = path.join(dir, 'state');
  const releasesDir = path.join(dir, 'releases');
  const kept = path.join(dir, 'kept');
  for (const d of [stateDir, releasesDir, kept]) fs.mkdirSync(d, { recursive: true });
  const settings = loadSettings(
    {},
    { STATE_DIR: stateDir, RELEASES_DIR: releasesDir, ASN_MAPPING: 'iptoasn,ip-location-db' },
  );
  const built: BuiltRelease[] = [];
  let n = 0;
  for (const event of history.events) {
    const inputs = path.join(dir, 'inputs', String(++n).padStart(3, '0'));
    if (event.kind === 'import') {
      fs.mkdirSync(inputs, { recursive: true });
      const files = event.files.map((f) => {
        const file = path.join(inputs, f.name);
        fs.writeFileSync(file, f.text);
        return describeFile(file, event.at);
      });
      const source = getSource(event.source);
      if (!source) throw new Error(`unknown source ${event.source}`);
      const db = openState(stateDir);
      try {
        const summary = importSnapshot(db, source, files, { origin: 'import', now: event.at });
        if (summary.rejectedCount > 0)
          throw new Error(`${event.source}: ${JSON.stringify(summary.rejected.slice(0, 3))}`);
      } finally {
        db.close();
      }
    } else if (event.kind === 'round') {
      fs.mkdirSync(inputs, { recursive: true });
      const file = path.join(inputs, `round-${event.round + 1}.ndjson`);
      fs.writeFileSync(file, event.text);
      const db = openState(stateDir);
      try {
        const [summary] = await importObservationFiles(db, [file]);
        if (summary && summary.rejectedCount > 0)
          throw new Error(`round ${event.round + 1}: ${JSON.stringify(summary.rejected.slice(0, 3))}`);
      } finally {
        db.close();
      }
    } else {
      // The release at its own moment (decision 0033: the builder's `now`), through the quality
      // gate's --force: the small excerpts drop more than its limits on every churn.
      const options = { dataset: 'demo' as const, force: true, log: () => {}, now: event.at };
      const { id, file } = publishRelease(settings, options);
      const copy = path.join(kept, path.basename(file));
      fs.copyFileSync(file, copy);
      built.push({ id, builtAt: event.at, file: copy });
    }
  }
  return built;
}
