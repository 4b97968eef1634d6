/** `npx builder …`: fetch feeds, import files, compile and publish releases, inspect them. */
import { Command, InvalidArgumentError } from 'commander';
import fs from 'node:fs';
import path from 'node:path';
import { loadSettings, type SettingName, type Settings } from '../shared/config.js';
import { nowEpoch } from '../shared/time.js';
import { SOURCES, getSource } from './sources/index.js';
import { openState, statePath } from './state.js';
import { describeFile, importObservationFiles, importSnapshot } from './importer.js';
import { printSummary } from './import-summary.js';
import { startProgress } from './progress.js';
import { publishRelease, pruneReleases } from './release/release-command.js';
import { inspectRelease, listReleases } from './release/catalog.js';
import { acceptedDrops, fetchCommand, type AcceptOptions } from './fetch-command.js';
import { ReleaseRefusedError } from './release/release-gate.js';
import { collectCommand } from './collector/collect-command.js';
import { importZdnsFiles } from './collector/zdns.js';
import { measuredRun, recordFigures } from './metrics.js';
import { openChosen, registerQueryCommand } from './query-command.js';
import { exportMmdb } from './export/mmdb-export.js';
import { diffReleases } from './diff.js';

function intArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number');
  return n;
}

/** --accept-drop <feed>, repeatable, each also a comma-separated list. */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** The quality gate's options of fetch, import and run (docs/operations.md#quality-gates). */
function acceptOptions(command: Command): Command {
  return command
    .option(
      '--accept-drop <feed>',
      "take this feed's new snapshot even when it drops more rows or addresses than FEED_MAX_ROW_DROP / FEED_MAX_ADDRESS_DROP allow (repeatable)",
      collect,
    )
    .option('--accept-drops', 'take every new snapshot whatever it drops');
}

/**
 * Publishes a release; a release the quality gate refuses is reported (exit 1, CURRENT untouched),
 * and refused or forced drops are counted in the metrics.
 */
async function releaseWithGate(
  settings: Settings,
  dataset: 'production' | 'demo',
  force: boolean,
): Promise<void> {
  try {
    const { forced } = publishRelease(settings, { dataset, force });
    const releaseDrops = forced.map((d) => ({ measure: d.measure, outcome: 'forced' as const }));
    if (releaseDrops.length > 0) await recordFigures(settings.STATE_DIR, { releaseDrops });
  } catch (error) {
    if (!(error instanceof ReleaseRefusedError)) throw error;
    console.error(`RELEASE NOT PUBLISHED: ${error.message}`);
    const releaseDrops = error.drops.map((d) => ({ measure: d.measure, outcome: 'refused' as const }));
    await recordFigures(settings.STATE_DIR, { releaseDrops });
    process.exitCode = 1;
  }
}

function settingsFrom(options: Record<string, unknown>): Settings {
  const overrides: Partial<Record<SettingName, unknown>> = {};
  if (options.stateDir) overrides.STATE_DIR = options.stateDir;
  if (options.releasesDir) overrides.RELEASES_DIR = options.releasesDir;
  if (options.resolver !== undefined) overrides.RESOLVER = options.resolver;
  if (options.timeout !== undefined) overrides.DNS_TIMEOUT_MS = options.timeout;
  if (options.retries !== undefined) overrides.DNS_RETRIES = options.retries;
  if (options.maxQps !== undefined) overrides.DNS_MAX_QPS = options.maxQps;
  if (options.maxInFlight !== undefined) overrides.DNS_MAX_IN_FLIGHT = options.maxInFlight;
  if (options.ptrShare !== undefined) overrides.PTR_SHARE = options.ptrShare;
  return loadSettings(process.env, overrides);
}

export function buildProgram(): Command {
  const program = new Command('builder')
    .description(
      'Builds the lookup service data: fetches feeds, imports files, publishes immutable releases.',
    )
    .option('--state-dir <dir>', 'builder state directory (env STATE_DIR, default ./state)')
    .option('--releases-dir <dir>', 'releases directory (env RELEASES_DIR, default ./releases)')
    .showHelpAfterError();

  acceptOptions(
    program
      .command('fetch')
      .description(
        'Download feeds from their publishers and import them; a feed that fails or drops too much keeps its previous snapshot.',
      )
      .argument(
        '[source...]',
        `sources to fetch (default: all with a URL): ${SOURCES.filter((s) => s.urls.length > 0)
          .map((s) => s.name)
          .join(', ')}`,
      )
      .option('--timeout <ms>', 'timeout of one download attempt (env FETCH_TIMEOUT_MS)', intArg)
      .option('--retries <n>', 'retries per download (env FETCH_RETRIES)', intArg),
  ).action(async (sources: string[], options: { timeout?: number; retries?: number } & AcceptOptions) => {
    const settings = settingsFrom(program.opts());
    await measuredRun(settings.STATE_DIR, 'fetch', async () => {
      const ok = await fetchCommand(settings, sources, options);
      if (!ok) process.exitCode = 1;
    });
  });

  acceptOptions(
    program
      .command('import')
      .description(
        'Import local files (plain or .gz) with the same parsers as fetch; a snapshot that drops too much is not taken.',
      ),
  )
    .argument(
      '<kind>',
      `source name or "observations": ${[...SOURCES.map((s) => s.name), 'observations'].join(', ')}`,
    )
    .argument(
      '<files...>',
      'files of one snapshot (e.g. ips-v4.txt ips-v6.txt), or observation NDJSON files in time order',
    )
    .option(
      '--format <format>',
      'observations only: ndjson (docs/observations-format.md) or zdns (JSON lines of ZDNS 2, modules A and AAAA)',
      'ndjson',
    )
    .action(async (kind: string, files: string[], options: { format: string } & AcceptOptions) => {
      const settings = settingsFrom(program.opts());
      if (options.format !== 'ndjson' && options.format !== 'zdns') {
        throw new Error(`--format ${JSON.stringify(options.format)}: expected ndjson or zdns`);
      }
      if (options.format !== 'ndjson' && kind !== 'observations') {
        throw new Error(`--format applies to "import observations" only`);
      }
      if ((options.acceptDrop || options.acceptDrops) && kind === 'observations') {
        throw new Error(`--accept-drop and --accept-drops apply to feeds, not to "import observations"`);
      }
      for (const f of files) if (!fs.existsSync(f)) throw new Error(`${f}: no such file`);
      const db = openState(settings.STATE_DIR);
      try {
        if (kind === 'observations') {
          // One state load, every file in order, one save (one transaction) at the end.
          const progress = (file: string) => startProgress(`import ${path.basename(file)}`, null);
          const summaries =
            options.format === 'zdns'
              ? await importZdnsFiles(db, files, progress)
              : await importObservationFiles(db, files, progress);
          summaries.forEach((summary, i) => printSummary({ ...summary, source: `observations ${files[i]}` }));
          const state = summaries[summaries.length - 1]?.state;
          if (state) {
            const s = state.save;
            console.log(
              `observations: state loaded in ${state.loadSeconds.toFixed(1)} s, saved in ${s.seconds.toFixed(1)} s ` +
                `(${s.names} new names, ${s.ended} ended intervals, ${s.states} states written, ${s.mode})`,
            );
          }
          return;
        }
        const source = getSource(kind);
        if (!source)
          throw new Error(
            `unknown kind "${kind}"; known: ${[...SOURCES.map((s) => s.name), 'observations'].join(', ')}`,
          );
        const now = nowEpoch();
        const accepted = acceptedDrops(options, [kind]);
        const gate = {
          limits: { rows: settings.FEED_MAX_ROW_DROP, addresses: settings.FEED_MAX_ADDRESS_DROP },
          accept: accepted === 'all' || accepted.includes(kind),
        };
        const summary = importSnapshot(
          db,
          source,
          files.map((f) => describeFile(f, now)),
          { origin: 'import', now, gate },
        );
        const drop = summary.drop;
        if (drop && !drop.accepted) {
          console.log(`${kind}: KEPT PREVIOUS SNAPSHOT: nothing imported: ${drop.message}`);
          process.exitCode = 1;
        } else {
          if (drop)
            console.log(`${kind}: taking the new snapshot all the same (--accept-drop): ${drop.summary}`);
          printSummary(summary);
        }
        if (drop) {
          const outcome = drop.accepted ? ('accepted' as const) : ('refused' as const);
          const drops = drop.drops.map((d) => ({ feed: kind, measure: d.measure, outcome }));
          await recordFigures(settings.STATE_DIR, { drops });
        }
      } finally {
        db.close();
      }
    });

  const collectOptions = (command: Command): Command =>
    command
      .option('--resolver <host:port>', 'resolver to ask (env RESOLVER, default the system resolver)')
      .option('--timeout <ms>', 'time to wait for one answer (env DNS_TIMEOUT_MS)', intArg)
      .option('--retries <n>', 'retries after a timeout (env DNS_RETRIES)', intArg)
      .option('--max-qps <n>', 'queries per second at most, 0: no cap (env DNS_MAX_QPS)', intArg)
      .option('--max-in-flight <n>', 'queries in flight at most (env DNS_MAX_IN_FLIGHT)', intArg)
      .option(
        '--ptr-share <fraction>',
        'share of the observed IPs whose PTR is checked (env PTR_SHARE)',
        parseFloat,
      );

  collectOptions(
    program
      .command('collect')
      .description(
        'Run one DNS collection round (seed names and www., A and AAAA, then a share of PTRs); an interrupted round resumes.',
      ),
  ).action(async (options: Record<string, unknown>) => {
    const settings = settingsFrom({ ...program.opts(), ...options });
    await measuredRun(settings.STATE_DIR, 'collect', async () => {
      const summary = await collectCommand(settings);
      if (summary.interrupted) process.exitCode = 130;
    });
  });

  acceptOptions(
    collectOptions(
      program
        .command('run')
        .description(
          'What a cron job calls: fetch every feed, run one collection round, publish a release (unless the quality gates refuse it).',
        ),
    ),
  )
    .option('--force-release', 'publish the release even when the release quality gate refuses it')
    .action(async (options: Record<string, unknown> & AcceptOptions & { forceRelease?: boolean }) => {
      const settings = settingsFrom({ ...program.opts(), ...options });
      await measuredRun(settings.STATE_DIR, 'run', async () => {
        // Only the gate's options: --timeout and --retries of run are the collector's.
        const { acceptDrop, acceptDrops } = options;
        const fetched = await fetchCommand(settings, [], { acceptDrop, acceptDrops });
        if (!fetched) console.error('run: some feeds failed and keep their previous snapshot; continuing');
        const summary = await collectCommand(settings);
        if (summary.interrupted) {
          process.exitCode = 130;
          console.error('run: the round was interrupted; no release published');
          return;
        }
        await releaseWithGate(settings, 'production', options.forceRelease === true);
        if (!fetched) process.exitCode = 1;
      });
    });

  program
    .command('release')
    .description(
      'Compile the current state into a new release file and publish it (atomically swaps releases/CURRENT).',
    )
    .option('--demo', 'label the release as demo data in its coverage block')
    .option(
      '--force',
      'publish even when it covers less routed space or has fewer current DNS answers than RELEASE_MAX_ROUTED_DROP / RELEASE_MAX_ANSWER_DROP allow',
    )
    .action(async (options: { demo?: boolean; force?: boolean }) => {
      const settings = settingsFrom(program.opts());
      if (!fs.existsSync(statePath(settings.STATE_DIR))) {
        throw new Error(
          `no builder state in ${settings.STATE_DIR}: run "npx builder fetch" or "npx builder import" first`,
        );
      }
      await measuredRun(settings.STATE_DIR, 'release', () =>
        releaseWithGate(settings, options.demo ? 'demo' : 'production', options.force === true),
      );
    });

  program
    .command('list')
    .description('List the release files, marking the one CURRENT points to.')
    .action(() => listReleases(settingsFrom(program.opts()).RELEASES_DIR));

  program
    .command('inspect')
    .description('Show a release: meta, coverage, row counts and sources (default: the current one).')
    .argument('[release]', 'release id (YYYYMMDDTHHMMSSZ) or file path')
    .action((release?: string) => inspectRelease(settingsFrom(program.opts()).RELEASES_DIR, release));

  program
    .command('prune')
    .description('Delete old release files, keeping the newest N and always the current one.')
    .requiredOption('--keep <n>', 'how many releases to keep', intArg)
    .action((options: { keep: number }) => {
      pruneReleases(settingsFrom(program.opts()).RELEASES_DIR, options.keep);
    });

  registerQueryCommand(program, () => settingsFrom(program.opts()).RELEASES_DIR);

  program
    .command('diff')
    .description(
      'What changed between two releases, as NDJSON on stdout (ranges, routes, domains, IPs); counts on stderr.',
    )
    .argument('<old>', 'release id (YYYYMMDDTHHMMSSZ) or file path')
    .argument('<new>', 'release id or file path; "current" for the CURRENT release')
    .action(async (oldId: string, newId: string) => {
      const dir = settingsFrom(program.opts()).RELEASES_DIR;
      const older = openChosen(dir, oldId === 'current' ? undefined : oldId);
      const newer = openChosen(dir, newId === 'current' ? undefined : newId);
      try {
        let lines: string[] = [];
        const summary = await diffReleases(older, newer, (change) => {
          lines.push(`${JSON.stringify(change)}\n`);
          if (lines.length >= 1000) {
            process.stdout.write(lines.join(''));
            lines = [];
          }
        });
        process.stdout.write(lines.join(''));
        const counts = Object.entries(summary).map(([k, n]) => `${k} ${n}`);
        console.error(
          `diff ${older.id} -> ${newer.id}: ${counts.length > 0 ? counts.join(', ') : 'no changes'}`,
        );
      } finally {
        older.close();
        newer.close();
      }
    });

  program
    .command('export')
    .description('Write a release in a format other tools read.')
    .command('mmdb')
    .description(
      'A MaxMind DB file: per network the routing AS, provider, prefix, is_datacenter/is_cdn and usage lists (docs/bulk-and-export.md).',
    )
    .requiredOption('--out <file>', 'the .mmdb file to write (replaced atomically)')
    .option('--release <id>', 'release id or file name (default: the CURRENT release)')
    .action(async (options: { out: string; release?: string }) => {
      const release = openChosen(settingsFrom(program.opts()).RELEASES_DIR, options.release);
      try {
        const s = await exportMmdb(release, options.out);
        console.error(
          `export mmdb: release ${release.id}: ${s.networks} networks from ${s.pieces} pieces, ${s.bytes} bytes, ${s.seconds.toFixed(1)} s -> ${options.out}`,
        );
      } finally {
        release.close();
      }
    });

  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    console.error(`builder: ${(error as Error).message}`);
    process.exitCode = process.exitCode || 2;
  } finally {
    // Benchmarks ask each step for its peak memory.
    if (process.env.BUILDER_REPORT_RUSAGE)
      console.error(`rusage: maxrss_kb=${process.resourceUsage().maxRSS}`);
  }
}
