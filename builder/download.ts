/**
 * The HTTP side of `builder fetch` (fetch.ts): one URL downloaded with per-attempt timeouts,
 * retries with exponential backoff (honouring Retry-After), conditional requests and a size limit.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { Dispatcher } from 'undici';

/** What a download needs of the fetch's settings. */
export interface DownloadSettings {
  timeoutMs: number;
  retries: number;
  retryBaseDelayMs: number;
  maxRetryAfterMs: number;
  maxBytes: number;
  maxRedirections: number;
  userAgent: string;
  log: (line: string) => void;
}

/** A file problem that ends the fetch of the source; the message follows the URL in the reason. */
export class FileProblem extends Error {}

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

export interface Validators {
  etag?: string;
  lastModified?: string;
}

export type Download = ({ kind: 'not_modified' } | { kind: 'body'; bytes: Buffer }) & Validators;

export function plural(n: number, word: string): string {
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
export async function download(
  url: string,
  validators: Validators,
  dispatcher: Dispatcher,
  settings: DownloadSettings,
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
