/**
 * `builder fetch`: downloads a source's files, checks them with the source's own parser and
 * publishes them as the source's new snapshot (see snapshot-store.ts), or keeps the previous
 * snapshot untouched and says why.
 *
 * A snapshot is all-or-nothing: when any file of the source fails to download (after retries),
 * fails to parse, yields no records, or the total record count shrank by more than `maxShrink`,
 * nothing on disk changes and the result is `kept_previous`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, interceptors, request } from 'undici';
import type { Dispatcher } from 'undici';
import type { SourceDefinition } from './sources/types.js';
import {
  commitSnapshot,
  decodeFeedBytes,
  originalFileName,
  rawFileName,
  readSnapshot,
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
  /** Refuse a snapshot with fewer than (1 - maxShrink) × the previous record count. Default 0.5. */
  maxShrink?: number;
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
}

export interface FetchSourcesOptions extends Omit<FetchOptions, 'urls'> {
  /** URL overrides per source name. */
  urls?: Record<string, string[]>;
  /** Sources fetched at the same time. Default 2. */
  concurrency?: number;
}

const DEFAULTS = {
  timeoutMs: 30_000,
  retries: 3,
  retryBaseDelayMs: 1_000,
  maxRetryAfterMs: 60_000,
  maxShrink: 0.5,
  maxBytes: 1024 * 1024 * 1024,
  maxRedirections: 5,
  userAgent: 'ipscope-builder/0.1 (+feed fetcher)',
};

type Settings = typeof DEFAULTS & { now: () => Date; log: (line: string) => void };

/** A file problem that ends the fetch of the source; the message follows the URL in the reason. */
class FileProblem extends Error {}

/** The abort reason of an attempt that ran out of time (undici's own timers only tick every ~0.5 s). */
class AttemptTimeout extends Error {}

/**
 * A timer that aborts an attempt: first when no response headers arrive in time, then (re-armed
 * on every body chunk) when the body stalls.
 */
class AttemptDeadline {
  readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {
    this.arm(`no response headers within ${timeoutMs} ms`);
  }

  arm(what: string): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(
      () => this.controller.abort(new AttemptTimeout(`timed out (${what})`)),
      this.timeoutMs,
    );
  }

  clear(): void {
    clearTimeout(this.timer);
  }
}

interface Validators {
  etag?: string;
  lastModified?: string;
}

type Download = ({ kind: 'not_modified' } | { kind: 'body'; bytes: Buffer }) & Validators;

/** ISO 8601 UTC without milliseconds, as on the wire. */
function isoSeconds(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After as milliseconds (delta-seconds or HTTP-date); undefined when absent or unreadable. */
function retryAfterMs(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now.getTime());
}

function describeNetworkError(error: unknown, timeoutMs: number): string {
  const code = (error as { code?: string }).code;
  const message = (error as Error).message ?? String(error);
  switch (code) {
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `timed out (no response headers within ${timeoutMs} ms)`;
    case 'UND_ERR_BODY_TIMEOUT':
      return `timed out (body stalled for ${timeoutMs} ms)`;
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `timed out (no connection within ${timeoutMs} ms)`;
    default:
      return code && !message.includes(code) ? `failed (${code}: ${message})` : `failed (${message})`;
  }
}

async function readBodyLimited(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
  onChunk: () => void,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    onChunk();
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    total += buffer.length;
    if (total > maxBytes) {
      body.destroy();
      throw new FileProblem(`is larger than the ${maxBytes}-byte limit (maxBytes)`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks, total);
}

/** One URL with retries. Throws FileProblem with the final description. */
async function download(
  url: string,
  validators: Validators,
  dispatcher: Dispatcher,
  settings: Settings,
  logPrefix: string,
): Promise<Download> {
  const headers: Record<string, string> = { 'user-agent': settings.userAgent, 'accept-encoding': 'identity' };
  if (validators.etag) headers['if-none-match'] = validators.etag;
  if (validators.lastModified) headers['if-modified-since'] = validators.lastModified;
  const attempts = settings.retries + 1;

  for (let attempt = 1; ; attempt++) {
    let problem: string;
    let waitAtLeastMs = 0;
    const deadline = new AttemptDeadline(settings.timeoutMs);
    try {
      const response = await request(url, {
        method: 'GET',
        headers,
        dispatcher,
        signal: deadline.controller.signal,
      });
      const stalled = `body stalled for ${settings.timeoutMs} ms`;
      deadline.arm(stalled);
      const got: Validators = {};
      const etag = headerValue(response.headers['etag']);
      const lastModified = headerValue(response.headers['last-modified']);
      if (etag) got.etag = etag;
      if (lastModified) got.lastModified = lastModified;
      const status = response.statusCode;
      if (status === 200) {
        return {
          kind: 'body',
          bytes: await readBodyLimited(response.body, settings.maxBytes, () => deadline.arm(stalled)),
          ...got,
        };
      }
      await response.body.dump();
      if (status === 304) {
        if (!validators.etag && !validators.lastModified) {
          throw new FileProblem('answered HTTP 304 Not Modified to a request without validators');
        }
        return { kind: 'not_modified', ...got };
      }
      if (status >= 300 && status < 400) {
        throw new FileProblem(
          `answered HTTP ${status} (redirect not followed: no Location or more than ${settings.maxRedirections} redirects)`,
        );
      }
      if (status !== 429 && status < 500) {
        throw new FileProblem(`answered HTTP ${status} (not retried; check the URL)`);
      }
      problem = `answered HTTP ${status}`;
      const retryAfter = retryAfterMs(headerValue(response.headers['retry-after']), new Date());
      if (retryAfter !== undefined) {
        if (retryAfter > settings.maxRetryAfterMs) {
          throw new FileProblem(
            `${problem} with Retry-After ${Math.ceil(retryAfter / 1000)} s (longer than the ${Math.ceil(settings.maxRetryAfterMs / 1000)} s maxRetryAfterMs) after ${plural(attempt, 'attempt')}`,
          );
        }
        waitAtLeastMs = retryAfter;
      }
    } catch (error) {
      if (error instanceof FileProblem) throw error;
      const timeout = deadline.controller.signal.reason;
      problem =
        error instanceof AttemptTimeout
          ? error.message
          : timeout instanceof AttemptTimeout
            ? timeout.message
            : describeNetworkError(error, settings.timeoutMs);
    } finally {
      deadline.clear();
    }
    if (attempt >= attempts) throw new FileProblem(`${problem} after ${plural(attempt, 'attempt')}`);
    const backoff = settings.retryBaseDelayMs * 2 ** (attempt - 1);
    const delay = Math.round(Math.max(waitAtLeastMs, backoff / 2 + (Math.random() * backoff) / 2));
    settings.log(`${logPrefix}: ${url} ${problem}; retry ${attempt} of ${settings.retries} in ${delay} ms`);
    await sleep(delay);
  }
}

/** Parses downloaded bytes with the source's parser; throws FileProblem when they are unusable. */
function checkFile(
  source: SourceDefinition,
  url: string,
  bytes: Buffer,
  maxBytes: number,
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
  if (records === 0) {
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
    maxShrink: options.maxShrink ?? DEFAULTS.maxShrink,
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
        } else {
          const sha256 = sha256Hex(got.bytes);
          const parsed = checkFile(source, url, got.bytes, settings.maxBytes);
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
  if (previous && records < (1 - settings.maxShrink) * previous.records) {
    const drop = Math.round((100 * (previous.records - records)) / previous.records);
    return keptPrevious(
      name,
      previous,
      `the new snapshot has ${plural(records, 'record')}, ${drop}% fewer than the previous ${previous.records} ` +
        `(more than the allowed ${Math.round(settings.maxShrink * 100)}%); raise maxShrink to accept it`,
    );
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
    files,
  };
  try {
    commitSnapshot(options.stateDir, manifest, rawFiles, { log: settings.log });
  } catch (error) {
    return keptPrevious(name, previous, `could not write the snapshot (${(error as Error).message})`);
  }
  const status: FetchStatus = changed ? 'updated' : 'not_modified';
  settings.log(`${name}: ${status === 'updated' ? 'updated' : 'not modified'}, ${plural(records, 'record')}`);
  return { source: name, status, snapshot: manifest, records, rejected };
}

/**
 * Fetches several sources, `concurrency` at a time; results are in the order of `sources`. One
 * source's failure never stops the others and never throws.
 */
export async function fetchSources(
  sources: readonly SourceDefinition[],
  options: FetchSourcesOptions,
): Promise<FetchResult[]> {
  const { urls, concurrency = 2, ...rest } = options;
  const results: FetchResult[] = new Array<FetchResult>(sources.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < sources.length) {
      const index = next++;
      const source = sources[index]!;
      try {
        const override = urls?.[source.name];
        results[index] = await fetchSource(source, override ? { ...rest, urls: override } : rest);
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
