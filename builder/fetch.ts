/**
 * `builder fetch`: downloads a source's files, checks them with the source's own parser and
 * publishes them as the source's new snapshot (see snapshot-store.ts), or keeps the previous
 * snapshot untouched and says why.
 *
 * A snapshot is all-or-nothing: when any file of the source fails to download (after retries),
 * fails to parse, yields no records (with no previous snapshot), or the snapshot drops more rows
 * or covered addresses than the quality gate allows (drop-gate.ts) without `acceptDrop`, nothing
 * on disk changes and the result is `kept_previous`.
 */
import { Agent, interceptors } from 'undici';
import { download, FileProblem, plural, type Validators } from './download.js';
import type { SourceDefinition } from './sources/types.js';
import { CoverageCounter, coverageFromJson, coverageOfSnapshot, coverageToJson } from './coverage.js';
import { checkFeedDrop, DEFAULT_DROP_LIMITS, type Drop, type DropLimits } from './drop-gate.js';
import {
  commitSnapshot,
  decodeFeedBytes,
  originalFileName,
  rawFileName,
  readSnapshot,
  readSnapshotText,
  sha256Hex,
  snapshotFileIntact,
} from './snapshot-store.js';
import type { SnapshotFile, SnapshotManifest } from './snapshot-store.js';

export type { SnapshotFile, SnapshotManifest } from './snapshot-store.js';
export { readSnapshot, readSnapshotFile, readSnapshotText, snapshotFilePaths } from './snapshot-store.js';

export interface FetchOptions {
  /** The builder's state directory; snapshots live in `<stateDir>/snapshots/<source>/`. */
  stateDir: string;
  /** Replaces `source.urls` (same length, same order); tests point them at a local server. */
  urls?: string[];
  /** Connect, response-headers and body-idle timeout per attempt. Default 30000. */
  timeoutMs?: number;
  /** Retries after the first attempt on network errors, timeouts, 429 and 5xx. Default 3. */
  retries?: number;
  /** Backoff before retry n is base × 2^(n-1), jittered to 50–100 %. Default 1000. */
  retryBaseDelayMs?: number;
  /** A Retry-After up to this long is honoured; a longer one ends the retries. Default 60000. */
  maxRetryAfterMs?: number;
  /**
   * The quality gate: refuse a snapshot that has more than these shares fewer rows, IPv4 or IPv6
   * addresses than the previous one (raised to the source's `churn`). Default DEFAULT_DROP_LIMITS.
   */
  maxDrop?: DropLimits;
  /** Take the snapshot even when it drops more than `maxDrop` allows (the operator's --accept-drop). */
  acceptDrop?: boolean;
  /** Largest accepted file, downloaded and after gunzip. Default 1 GiB. */
  maxBytes?: number;
  /** Redirects followed per request. Default 5. */
  maxRedirections?: number;
  userAgent?: string;
  now?: () => Date;
  log?: (line: string) => void;
}

export type FetchStatus = 'updated' | 'not_modified' | 'kept_previous';

export interface FetchResult {
  source: string;
  /**
   * `updated`: a new snapshot was published. `not_modified`: every file answered 304 or the same
   * bytes (only checkedAt and validators were refreshed). `kept_previous`: nothing changed on disk.
   */
  status: FetchStatus;
  /** Why the previous snapshot was kept; names the source, the URL and what went wrong. */
  reason?: string;
  /** The current snapshot after the fetch (null when there is none). */
  snapshot: SnapshotManifest | null;
  records?: number;
  rejected?: number;
  /** The measures that fell by more than the gate allows; `accepted`: taken all the same. */
  drop?: { drops: Drop[]; accepted: boolean };
}

export interface FetchSourcesOptions extends Omit<FetchOptions, 'urls' | 'acceptDrop'> {
  /** URL overrides per source name. */
  urls?: Record<string, string[]>;
  /** Sources whose drops are accepted (`all`: every one). */
  acceptDrops?: 'all' | readonly string[];
  /** Sources fetched at the same time. Default 2. */
  concurrency?: number;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  retries: 3,
  retryBaseDelayMs: 1_000,
  maxRetryAfterMs: 60_000,
  maxBytes: 1024 * 1024 * 1024,
  maxRedirections: 5,
  userAgent: 'ipscope-builder/0.1 (+feed fetcher)',
};

type Settings = typeof DEFAULTS & { maxDrop: DropLimits; now: () => Date; log: (line: string) => void };

/** ISO 8601 UTC without milliseconds, as on the wire. */
function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Parses downloaded bytes with the source's parser, adding the addresses its records cover to
 * `coverage`; throws FileProblem when they are unusable. A file without any row is a problem only
 * when there is no previous snapshot (`emptyIsDrop` false): else the quality gate weighs it.
 */
function checkFile(
  source: SourceDefinition,
  url: string,
  bytes: Buffer,
  maxBytes: number,
  coverage: CoverageCounter,
  emptyIsDrop: boolean,
): { records: number; rejected: number; publishedAt?: string } {
  let text: string;
  try {
    text = decodeFeedBytes(url, bytes, maxBytes);
  } catch (error) {
    throw new FileProblem(`could not be gunzipped (${(error as Error).message})`);
  }
  let result: ReturnType<SourceDefinition['parse']>;
  try {
    result = source.parse(text, originalFileName(url));
  } catch (error) {
    throw new FileProblem(`could not be parsed (${(error as Error).message})`);
  }
  const records = result.records.length;
  const rejected = result.rejected.length;
  for (const record of result.records) coverage.addRecord(source.kind, record);
  if (records === 0 && !(emptyIsDrop && rejected === 0)) {
    const first = result.rejected[0];
    if (first) {
      throw new FileProblem(
        `had all ${plural(rejected, 'row')} rejected (line ${first.line}: ${first.reason})`,
      );
    }
    throw new FileProblem('has no records');
  }
  return result.publishedAt === undefined
    ? { records, rejected }
    : { records, rejected, publishedAt: result.publishedAt };
}

function keptPrevious(name: string, previous: SnapshotManifest | null, detail: string): FetchResult {
  const kept = previous ? `kept previous snapshot (${previous.fetchedAt})` : 'no previous snapshot to keep';
  return { source: name, status: 'kept_previous', reason: `${name}: ${kept}: ${detail}`, snapshot: previous };
}

function latest(values: (string | undefined)[]): string | undefined {
  const defined = values.filter((v): v is string => v !== undefined);
  return defined.length ? defined.reduce((a, b) => (Date.parse(b) > Date.parse(a) ? b : a)) : undefined;
}

/**
 * Fetches every file of `source` and publishes them as its new snapshot, or keeps the previous
 * one. Never throws for a feed's failure (only for a bad `urls` override).
 */
export async function fetchSource(source: SourceDefinition, options: FetchOptions): Promise<FetchResult> {
  const settings: Settings = {
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    retries: options.retries ?? DEFAULTS.retries,
    retryBaseDelayMs: options.retryBaseDelayMs ?? DEFAULTS.retryBaseDelayMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
    maxDrop: options.maxDrop ?? DEFAULT_DROP_LIMITS,
    maxBytes: options.maxBytes ?? DEFAULTS.maxBytes,
    maxRedirections: options.maxRedirections ?? DEFAULTS.maxRedirections,
    userAgent: options.userAgent ?? DEFAULTS.userAgent,
    now: options.now ?? (() => new Date()),
    log: options.log ?? (() => {}),
  };
  const name = source.name;
  const urls = options.urls ?? source.urls;
  if (urls.length === 0)
    throw new RangeError(`${name} has no URL to fetch; load its files with "builder import"`);
  if (urls.length !== source.urls.length) {
    throw new RangeError(
      `${name}: expected ${source.urls.length} URL(s) in the override, got ${urls.length}`,
    );
  }

  let previous: SnapshotManifest | null;
  try {
    previous = readSnapshot(options.stateDir, name);
  } catch (error) {
    return keptPrevious(name, null, (error as Error).message);
  }

  const agent = new Agent({
    connectTimeout: settings.timeoutMs,
    headersTimeout: settings.timeoutMs,
    bodyTimeout: settings.timeoutMs,
  });
  const dispatcher = agent.compose(interceptors.redirect({ maxRedirections: settings.maxRedirections }));

  const files: SnapshotFile[] = [];
  const rawFiles = new Map<string, Buffer>();
  const coverage = new CoverageCounter();
  /** Files answered 304: parsed from the stored copy when the snapshot changed (for its coverage). */
  const unparsed: SnapshotFile[] = [];
  let changed = previous === null || previous.files.length !== urls.length;
  try {
    for (const url of urls) {
      const before = previous?.files.find((f) => f.url === url);
      const usable =
        previous && before && snapshotFileIntact(options.stateDir, previous, before) ? before : undefined;
      if (before && !usable)
        settings.log(`${name}: stored copy of ${url} is missing or damaged; downloading it in full`);
      try {
        const validators: Validators = {};
        if (usable?.etag) validators.etag = usable.etag;
        if (usable?.lastModified) validators.lastModified = usable.lastModified;
        const got = await download(url, validators, dispatcher, settings, name);
        const etag = got.etag ?? (got.kind === 'not_modified' ? usable?.etag : undefined);
        const lastModified =
          got.lastModified ?? (got.kind === 'not_modified' ? usable?.lastModified : undefined);
        let entry: SnapshotFile;
        if (got.kind === 'not_modified') {
          entry = { ...usable! };
          unparsed.push(usable!);
        } else {
          const sha256 = sha256Hex(got.bytes);
          const parsed = checkFile(source, url, got.bytes, settings.maxBytes, coverage, previous !== null);
          if (usable && usable.sha256 === sha256) {
            entry = { ...usable, records: parsed.records, rejected: parsed.rejected };
          } else {
            changed = true;
            const file = rawFileName(sha256, url);
            rawFiles.set(file, got.bytes);
            entry = {
              url,
              file,
              sha256,
              bytes: got.bytes.length,
              fetchedAt: isoSeconds(settings.now()),
              ...parsed,
            };
          }
          settings.log(`${name}: ${url}: ${plural(parsed.records, 'record')}, ${parsed.rejected} rejected`);
        }
        delete entry.etag;
        delete entry.lastModified;
        if (etag !== undefined) entry.etag = etag;
        if (lastModified !== undefined) entry.lastModified = lastModified;
        files.push(entry);
      } catch (error) {
        if (error instanceof FileProblem) return keptPrevious(name, previous, `${url} ${error.message}`);
        throw error;
      }
    }
  } catch (error) {
    return keptPrevious(name, previous, `unexpected error: ${(error as Error).message}`);
  } finally {
    await agent.destroy().catch(() => {});
  }

  const records = files.reduce((sum, f) => sum + f.records, 0);
  const rejected = files.reduce((sum, f) => sum + f.rejected, 0);
  let covered = previous?.coverage;
  let drop: FetchResult['drop'];
  if (changed) {
    try {
      for (const file of unparsed) {
        const text = readSnapshotText(options.stateDir, previous!, file);
        for (const record of source.parse(text, file.file).records) coverage.addRecord(source.kind, record);
      }
    } catch (error) {
      return keptPrevious(name, previous, `could not read the stored files (${(error as Error).message})`);
    }
    const after = coverage.total();
    covered = coverageToJson(after);
    if (previous) {
      const before = previous.coverage
        ? coverageFromJson(previous.coverage)
        : (coverageOfSnapshot(options.stateDir, source, previous, settings.log) ?? after);
      const check = checkFeedDrop(
        source,
        { rows: previous.records, coverage: before },
        { rows: records, coverage: after },
        settings.maxDrop,
      );
      if (check.drops.length > 0 && !options.acceptDrop) {
        return {
          ...keptPrevious(name, previous, check.message),
          drop: { drops: check.drops, accepted: false },
        };
      }
      if (check.drops.length > 0) {
        settings.log(`${name}: taking the new snapshot all the same (--accept-drop): ${check.summary}`);
        drop = { drops: check.drops, accepted: true };
      }
    }
  }

  const now = isoSeconds(settings.now());
  const publishedAt = latest(files.map((f) => f.publishedAt));
  const manifest: SnapshotManifest = {
    formatVersion: 1,
    source: name,
    fetchedAt: changed || !previous ? now : previous.fetchedAt,
    checkedAt: now,
    records,
    rejected,
    ...(publishedAt === undefined ? {} : { publishedAt }),
    ...(covered === undefined ? {} : { coverage: covered }),
    files,
  };
  try {
    commitSnapshot(options.stateDir, manifest, rawFiles, { log: settings.log });
  } catch (error) {
    return keptPrevious(name, previous, `could not write the snapshot (${(error as Error).message})`);
  }
  const status: FetchStatus = changed ? 'updated' : 'not_modified';
  settings.log(`${name}: ${status === 'updated' ? 'updated' : 'not modified'}, ${plural(records, 'record')}`);
  return { source: name, status, snapshot: manifest, records, rejected, ...(drop ? { drop } : {}) };
}

/**
 * Fetches several sources, `concurrency` at a time; results are in the order of `sources`. One
 * source's failure never stops the others and never throws.
 */
export async function fetchSources(
  sources: readonly SourceDefinition[],
  options: FetchSourcesOptions,
): Promise<FetchResult[]> {
  const { urls, concurrency = 2, acceptDrops = [], ...rest } = options;
  const results: FetchResult[] = new Array<FetchResult>(sources.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < sources.length) {
      const index = next++;
      const source = sources[index]!;
      try {
        const override = urls?.[source.name];
        const acceptDrop = acceptDrops === 'all' || acceptDrops.includes(source.name);
        results[index] = await fetchSource(source, {
          ...rest,
          acceptDrop,
          ...(override ? { urls: override } : {}),
        });
      } catch (error) {
        let previous: SnapshotManifest | null = null;
        try {
          previous = readSnapshot(options.stateDir, source.name);
        } catch {
          // already failing; report the first error
        }
        results[index] = keptPrevious(source.name, previous, (error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, sources.length)) }, worker));
  return results;
}
