/**
 * One simulated day's builder steps in ONE process, at a chosen moment (bench-build --days): the
 * CLI takes its clock from the system, a simulated day needs the day's. Feed snapshots through
 * `importSnapshot` with the moment as their fetch and import time, observation files through
 * `importObservationFiles` (their own times), a release through `publishRelease` with the moment
 * as its `now` (decision 0033). Prints the peak RSS (rusage) at the end as bin/builder.js does.
 *
 *   node dated-batch.js --state-dir S --releases-dir R --now <epoch> -- import <kind> <files…>
 *     -- observations <files…> -- release
 */
import path from 'node:path';
import { loadSettings } from '../../shared/config.js';
import { describeFile, importObservationFiles, importSnapshot } from '../../builder/importer.js';
import { publishRelease } from '../../builder/release/release-command.js';
import { getSource } from '../../builder/sources/index.js';
import { openState } from '../../builder/state.js';

const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const head = argv.slice(0, split < 0 ? argv.length : split);
const option = (name: string) => {
  const i = head.indexOf(name);
  if (i < 0 || head[i + 1] === undefined) throw new Error(`dated-batch: missing ${name}`);
  return head[i + 1]!;
};
const stateDir = path.resolve(option('--state-dir'));
const releasesDir = path.resolve(option('--releases-dir'));
const now = Number(option('--now'));
const commands: string[][] = [];
for (const arg of argv.slice(split + 1)) {
  if (arg === '--') commands.push([]);
  else if (commands.length === 0) commands.push([arg]);
  else commands[commands.length - 1]!.push(arg);
}

try {
  for (const [command, ...args] of commands) {
    if (command === 'import') {
      const [kind, ...files] = args;
      const source = getSource(kind!);
      if (!source) throw new Error(`unknown source ${kind}`);
      const db = openState(stateDir);
      try {
        const summary = importSnapshot(
          db,
          source,
          files.map((f) => describeFile(f, now)),
          { origin: 'import', now },
        );
        console.log(
          `${kind}: read ${summary.read}, written ${summary.written}, rejected ${summary.rejectedCount},`,
        );
      } finally {
        db.close();
      }
    } else if (command === 'observations') {
      const db = openState(stateDir);
      try {
        const summaries = await importObservationFiles(db, args);
        const rejected = summaries.reduce((n, s) => n + s.rejectedCount, 0);
        console.log(`observations: ${args.length} files, rejected ${rejected},`);
      } finally {
        db.close();
      }
    } else if (command === 'release') {
      const settings = loadSettings(process.env, { STATE_DIR: stateDir, RELEASES_DIR: releasesDir });
      // The day's moment as the build's clock; the gate forced (the generated churn is not a bad day).
      const options = { dataset: 'production' as const, force: true, now };
      publishRelease(settings, options);
    } else throw new Error(`dated-batch: unknown command ${command}`);
  }
} catch (error) {
  console.error(`dated-batch: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 2;
} finally {
  if (process.env.BUILDER_REPORT_RUSAGE) console.error(`rusage: maxrss_kb=${process.resourceUsage().maxRSS}`);
}
