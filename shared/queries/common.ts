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

/**
 * The response as JSON. The coverage, attribution and release blocks (about 2.5 KB, the same for
 * every response of a release) are serialised once per release and appended.
 */
export function responseJson(response: object): string {
  const r = response as { coverage?: unknown; attribution?: unknown; release?: unknown };
  const blocksJson = r.coverage === undefined ? undefined : BLOCKS_JSON.get(r.coverage as object);
  if (blocksJson === undefined) return JSON.stringify(response);
  const { coverage: _c, attribution: _a, release: _r, ...rest } = r;
  const head = JSON.stringify(rest);
  return head.length === 2 ? `{${blocksJson}}` : `${head.slice(0, -1)},${blocksJson}}`;
}

/**
 * JSON.stringify(json) for `json = responseJson(response)`: the response as a JSON string value
 * (the text of an MCP tool result). The release blocks' part is escaped once per release.
 */
export function escapedResponseJson(response: object, json: string): string {
  const coverage = (response as { coverage?: unknown }).coverage;
  const blocksJson = coverage === undefined ? undefined : BLOCKS_JSON.get(coverage as object);
  if (blocksJson === undefined) return JSON.stringify(json);
  // json is `{head…,` or `{`, then the blocks and `}`; escaping works character by character.
  const cut = json.length - blocksJson.length - 1;
  if (cut < 1 || !json.startsWith(blocksJson, cut) || !json.endsWith('}')) return JSON.stringify(json);
  let tail = ESCAPED_BLOCKS.get(coverage as object);
  if (tail === undefined) {
    tail = JSON.stringify(`${blocksJson}}`).slice(1);
    ESCAPED_BLOCKS.set(coverage as object, tail);
  }
  return JSON.stringify(json.slice(0, cut)).slice(0, -1) + tail;
}

/** coverage object -> its blocks escaped as part of a JSON string, with `}` and the closing quote. */
const ESCAPED_BLOCKS = new WeakMap<object, string>();

/** coverage object of an open release -> its serialised blocks (weak: dies with the release). */
const BLOCKS_JSON = new WeakMap<object, string>();

export function registerBlocks(release: Release): void {
  const { coverage, attribution, release: r } = blocks(release);
  BLOCKS_JSON.set(coverage, JSON.stringify({ coverage, attribution, release: r }).slice(1, -1));
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
