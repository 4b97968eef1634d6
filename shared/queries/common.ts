/** Helpers the five queries share: the response blocks, statement cache, parameter parsing. */
import type Database from 'better-sqlite3';
import { ApiError } from '../errors.js';
import { formatIp, parseIp, unmapIpv4, type Ip } from '../ip.js';
import { normalizeDomain } from '../domain.js';
import { toIso } from '../time.js';
import type { Release } from './release.js';

/** The coverage, attribution and release blocks every lookup response carries. */
export function blocks(release: Release): {
  coverage: Release['coverage'];
  attribution: Release['attribution'];
  release: Release['release'];
} {
  return { coverage: release.coverage, attribution: release.attribution, release: release.release };
}

export function requireRelease(release: Release | null): Release {
  if (release === null) throw new ApiError('release_unavailable');
  return release;
}

/** A value computed once per release (range indexes, row caches), kept on the release. */
export function perRelease<T>(release: Release, name: string, make: () => T): T {
  let v = release.cache.get(name) as T | undefined;
  if (v === undefined) {
    v = make();
    release.cache.set(name, v);
  }
  return v;
}

/** A Map that forgets everything when it reaches its size (rows repeat in bursts; cheap and bounded). */
export class BoundedCache<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max) this.clear();
    return super.set(key, value);
  }
}

/**
 * A bounded cache that keeps what was used recently: two generations of at most `half` entries
 * each; a hit in the older one moves the entry to the newer one, and when the newer one is full the
 * older one is dropped. About LRU for skewed traffic, at the cost of two Map operations; a scan of
 * more distinct keys than it holds gets no hits (and costs nothing extra).
 */
export class RecentCache<K, V> {
  private current = new Map<K, V>();
  private previous = new Map<K, V>();

  constructor(private readonly half: number) {}

  get(key: K): V | undefined {
    const hit = this.current.get(key);
    if (hit !== undefined) return hit;
    const old = this.previous.get(key);
    if (old !== undefined) this.set(key, old);
    return old;
  }

  set(key: K, value: V): void {
    if (this.current.size >= this.half) {
      this.previous = this.current;
      this.current = new Map();
    }
    this.current.set(key, value);
  }
}

/** A release's coverage, attribution and release blocks as JSON, with the response's closing brace. */
export interface ReleaseBlocksJson {
  /** `"coverage":…,"attribution":…,"release":…}` */
  readonly text: string;
  /** The text as UTF-8, written after every response head of the release. */
  readonly bytes: Buffer;
  /** The text escaped as the end of a JSON string value, closing quote included. */
  readonly escaped: string;
  /** `escaped` as UTF-8. */
  readonly escapedBytes: Buffer;
}

/**
 * A response's JSON in two parts: `head`, its own fields (`{…,`, or `{` when it has none), and
 * `blocks`, the release blocks (about 2.5 KB, the same for every response of a release, so
 * serialised and encoded once per release). A response without release blocks (a bogon
 * lookup_ip, an object of no release) is all head and `blocks` is null. `head` is UTF-8 when the
 * response is kept to be sent many times.
 */
export interface ResponseJson {
  readonly head: string | Buffer;
  readonly blocks: ReleaseBlocksJson | null;
}

/** The response's JSON in parts (ResponseJson): what JSON.stringify gives, written in two pieces. */
export function responseParts(response: object): ResponseJson {
  const r = response as { coverage?: unknown; attribution?: unknown; release?: unknown };
  const blocks = r.coverage === undefined ? undefined : BLOCKS_JSON.get(r.coverage as object);
  if (blocks === undefined) return { head: JSON.stringify(response), blocks: null };
  const { coverage: _c, attribution: _a, release: _r, ...rest } = r;
  const head = JSON.stringify(rest);
  return { head: head.length === 2 ? '{' : `${head.slice(0, -1)},`, blocks };
}

/** The JSON text of parts from responseParts. */
export function jsonText(json: ResponseJson): string {
  const head = typeof json.head === 'string' ? json.head : json.head.toString('utf8');
  return json.blocks === null ? head : head + json.blocks.text;
}

/** The size of the JSON in bytes (a Content-Length). */
export function jsonByteLength(json: ResponseJson): number {
  return Buffer.byteLength(json.head) + (json.blocks === null ? 0 : json.blocks.bytes.length);
}

/**
 * The start of JSON.stringify(jsonText(json)), the response as a JSON string value (the text of an
 * MCP tool result): the head escaped, from the opening quote, and the closing quote when there are
 * no blocks; else `blocks.escaped` follows. Escaping works character by character and the head ends
 * with `{` or `,`, so the two escaped pieces join into the escaped whole.
 */
export function escapedJsonHead(json: ResponseJson): string {
  const head = JSON.stringify(typeof json.head === 'string' ? json.head : json.head.toString('utf8'));
  return json.blocks === null ? head : head.slice(0, -1);
}

/** The response as JSON text (responseParts joined). */
export function responseJson(response: object): string {
  return jsonText(responseParts(response));
}

/** coverage object of an open release -> its serialised blocks (weak: dies with the release). */
const BLOCKS_JSON = new WeakMap<object, ReleaseBlocksJson>();

export function registerBlocks(release: Release): void {
  const { coverage, attribution, release: r } = blocks(release);
  const text = `${JSON.stringify({ coverage, attribution, release: r }).slice(1, -1)}}`;
  const escaped = JSON.stringify(text).slice(1);
  BLOCKS_JSON.set(coverage, {
    text,
    bytes: Buffer.from(text),
    escaped,
    escapedBytes: Buffer.from(escaped),
  });
}

/**
 * A prepared statement cached on the release (statements die with their connection); `raw`: its
 * rows come as arrays of column values, not objects.
 */
export function statement(release: Release, sql: string, raw = false): Database.Statement {
  const key = raw ? `raw\0${sql}` : sql;
  let s = release.cache.get(key) as Database.Statement | undefined;
  if (s === undefined) {
    s = release.db.prepare(sql);
    if (raw) s.raw(true);
    release.cache.set(key, s);
  }
  return s;
}

/** One IPv4 or IPv6 address (an IPv4-mapped IPv6 address becomes its IPv4 address); else invalid_ip. */
export function parseIpParam(text: string): { ip: Ip; text: string } {
  const parsed = text.length <= 64 ? parseIp(text) : null;
  if (parsed === null) {
    throw new ApiError(
      'invalid_ip',
      text.includes('/')
        ? `${JSON.stringify(text)} is a range, not one address: send a single IPv4 or IPv6 address`
        : `${JSON.stringify(text.slice(0, 100))} is not an IPv4 or IPv6 address: send a single address`,
    );
  }
  const ip = unmapIpv4(parsed);
  return { ip, text: formatIp(ip) };
}

export function parseDomainParam(text: string): string {
  const result = normalizeDomain(text);
  if (!result.ok) {
    throw new ApiError(
      'invalid_domain',
      `${JSON.stringify(text.slice(0, 300))} is not a hostname with at least two labels: ${result.reason}`,
    );
  }
  return result.domain;
}

export function isoOrNull(epoch: number | null | undefined): string | null {
  return epoch === null || epoch === undefined ? null : toIso(epoch);
}
