/** `builder fetch`: download feeds, then import every snapshot that changed into the state. */
import type { Settings } from '../shared/config.js';
import { fetchSources, snapshotFilePaths, type FetchResult } from './fetch.js';
import { SOURCES, getSource } from './sources/index.js';
import { openState } from './state.js';
import { importSnapshot } from './importer.js';
import { printSummary } from './import-summary.js';
import type { SourceDefinition } from './sources/types.js';
import { recordFigures, type DropFigure } from './metrics.js';
import { parseIsoToEpoch } from '../shared/time.js';

/** `https://host/path` as `<mirror>/host/path`. */
export function mirrorUrl(mirror: string, url: string): string {
  const u = new URL(url);
  return `${mirror.replace(/\/+$/, '')}/${u.host}${u.pathname}${u.search}`;
}

/** What the operator accepts: --accept-drop <feed> (repeatable), or --accept-drops (every feed). */
export interface AcceptOptions {
  acceptDrop?: string[];
  acceptDrops?: boolean;
}

/** The feeds whose drops are accepted; throws for a name that is not one of `among`. */
export function acceptedDrops(options: AcceptOptions, among: readonly string[]): 'all' | string[] {
  if (options.acceptDrops) return 'all';
  const names = (options.acceptDrop ?? [])
    .flatMap((n) => n.split(','))
    .map((n) => n.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!among.includes(name)) {
      throw new Error(
        `--accept-drop ${name}: not a feed of this command (${among.join(', ')}); name the feed whose drop you accept`,
      );
    }
  }
  return names;
}

export async function fetchCommand(
  settings: Settings,
  names: string[],
  options: { timeout?: number; retries?: number } & AcceptOptions,
): Promise<boolean> {
  const sources: SourceDefinition[] = [];
  for (const name of names.length > 0 ? names : SOURCES.filter((s) => s.urls.length > 0).map((s) => s.name)) {
    const source = getSource(name);
    if (!source) throw new Error(`unknown source "${name}"; known: ${SOURCES.map((s) => s.name).join(', ')}`);
    if (source.urls.length === 0)
      throw new Error(`${name} has no publisher URL; load it with "npx builder import ${name} <file>"`);
    sources.push(source);
  }
  const acceptDrops = acceptedDrops(
    options,
    sources.map((s) => s.name),
  );
  const urls: Record<string, string[]> = {};
  if (settings.FEED_MIRROR)
    for (const s of sources) urls[s.name] = s.urls.map((u) => mirrorUrl(settings.FEED_MIRROR, u));
  const results = await fetchSources(sources, {
    stateDir: settings.STATE_DIR,
    urls,
    timeoutMs: options.timeout ?? settings.FETCH_TIMEOUT_MS,
    retries: options.retries ?? settings.FETCH_RETRIES,
    maxDrop: { rows: settings.FEED_MAX_ROW_DROP, addresses: settings.FEED_MAX_ADDRESS_DROP },
    acceptDrops,
    log: (line) => console.error(line),
  });
  const db = openState(settings.STATE_DIR);
  let ok = true;
  const figures: Array<{ feed: string; status: string; seconds: number }> = [];
  const drops: DropFigure[] = [];
  try {
    const imported = db.prepare(`SELECT files FROM source_snapshot WHERE source = ?`).pluck();
    for (const result of results) {
      if (result.status === 'kept_previous') {
        ok = false;
        console.log(`${result.source}: KEPT PREVIOUS SNAPSHOT: ${result.reason ?? 'fetch failed'}`);
      }
      for (const d of result.drop?.drops ?? [])
        drops.push({
          feed: result.source,
          measure: d.measure,
          outcome: result.drop!.accepted ? 'accepted' : 'refused',
        });
      const figure = { feed: result.source, status: result.status, seconds: 0 };
      figures.push(figure);
      if (!result.snapshot) continue;
      if (!needsImport(result, imported.get(result.source) as string | undefined)) {
        if (result.status !== 'kept_previous') console.log(`${result.source}: not modified`);
        continue;
      }
      const source = getSource(result.source)!;
      const files = snapshotFilePaths(settings.STATE_DIR, result.snapshot).map((f) => ({
        path: f.path,
        sha256: f.sha256,
        bytes: f.bytes,
        url: f.url,
        fetchedAt: parseIsoToEpoch(f.fetchedAt) ?? Math.floor(Date.now() / 1000),
      }));
      const now = parseIsoToEpoch(result.snapshot.fetchedAt) ?? Math.floor(Date.now() / 1000);
      const started = performance.now();
      printSummary(importSnapshot(db, source, files, { origin: 'fetch', now }));
      figure.seconds = (performance.now() - started) / 1000;
    }
  } finally {
    db.close();
  }
  await recordFigures(settings.STATE_DIR, { feeds: figures, drops });
  return ok;
}

/** A snapshot is imported when its files differ from what the state was last built from. */
function needsImport(result: FetchResult, importedFiles: string | undefined): boolean {
  if (!result.snapshot) return false;
  if (!importedFiles) return true;
  const stored = (JSON.parse(importedFiles) as Array<{ sha256: string }>).map((f) => f.sha256).join(',');
  return stored !== result.snapshot.files.map((f) => f.sha256).join(',');
}
