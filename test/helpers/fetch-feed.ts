/**
 * The feed server and fixtures of the fetch tests (test/builder/fetch*.test.ts): Cloudflare's real
 * ips-v4 list, a CIDR-per-line source, a local HTTP server with routes and the headers of every
 * request, a temporary state directory and the manifest a first fetch of the fixture writes.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchSource, type FetchOptions } from '../../builder/fetch.js';
import { sha256Hex } from '../../builder/snapshot-store.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from '../../builder/sources/types.js';
import { formatCidr, parseCidr } from '../../shared/ip.js';

// Cloudflare's real ips-v4 list (15 CIDRs, no trailing newline), committed as a fixture.
export const FIXTURE = fs.readFileSync(
  fileURLToPath(new URL('../fixtures/fetch/ips-v4.txt', import.meta.url)),
);
export const FIXTURE_SHA256 = 'f02c6d83bc01ab0ae8577160e036d700c7455359bce054df884e5d7d9e4e9e7b';
export const FIXTURE_LINES = FIXTURE.toString('utf8').split('\n');
/** The IPv4 addresses the 15 CIDRs cover (none overlaps another). */
export const FIXTURE_IPV4_ADDRESSES = 1_524_736;
export const T0 = new Date('2026-11-20T10:00:00.000Z');
export const T1 = new Date('2026-11-21T11:30:00.000Z');
export const ETAG = '"cf-ips-v4-1"';
export const LAST_MODIFIED = 'Fri, 20 Nov 2026 09:00:00 GMT';

/** A CIDR-per-line parser, like the real plain-list feeds; an HTML page makes it throw. */
export function parseCidrList(text: string, file: string): ParseResult<ProviderRangeRecord> {
  if (text.trimStart().startsWith('<')) throw new Error(`${file}: line 1: expected a CIDR list, got HTML`);
  const result: ParseResult<ProviderRangeRecord> = { records: [], rejected: [], read: 0 };
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    result.read++;
    const cidr = parseCidr(line);
    if (!cidr) {
      result.rejected.push({ line: index + 1, reason: `expected a CIDR, got "${line}"` });
      return;
    }
    result.records.push({ prefix: formatCidr(cidr), provider: 'Cloudflare', category: 'cdn', metadata: {} });
  });
  return result;
}

export function cidrSource(name: string, files = 1): SourceDefinition<'provider_ranges'> {
  return {
    name,
    kind: 'provider_ranges',
    description: 'test list, one CIDR per line',
    urls: Array.from({ length: files }, (_, i) => `https://www.cloudflare.com/ips-v${i === 0 ? 4 : 6}`),
    attribution: { source: name, by: 'Cloudflare', license: 'none stated' },
    parse: parseCidrList,
  };
}

/** The part of a tap subtest the helpers use. */
export interface TestContext {
  teardown(fn: () => unknown): void;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, count: number) => void;

export interface TestServer {
  url(pathname: string): string;
  /** Requests seen, per path: their headers. */
  requests(pathname: string): http.IncomingHttpHeaders[];
  route(pathname: string, handler: Handler): void;
}

export async function startServer(t: TestContext): Promise<TestServer> {
  const routes = new Map<string, Handler>();
  const seen = new Map<string, http.IncomingHttpHeaders[]>();
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const list = seen.get(pathname) ?? [];
    list.push(req.headers);
    seen.set(pathname, list);
    const handler = routes.get(pathname);
    if (!handler) {
      res.writeHead(404).end('not found');
      return;
    }
    handler(req, res, list.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    requests: (pathname) => seen.get(pathname) ?? [],
    route: (pathname, handler) => routes.set(pathname, handler),
  };
}

/** Serves `body` with validators; answers 304 to a matching If-None-Match. */
export function serveFile(body: Buffer | string, etag = ETAG): Handler {
  return (req, res) => {
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', etag, 'last-modified': LAST_MODIFIED }).end(body);
  };
}

export function tempStateDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ipscope-fetch-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file of a source's snapshot directory with its sha256: the on-disk state to compare. */
export function diskState(stateDir: string, source: string): Record<string, string> {
  const dir = path.join(stateDir, 'snapshots', source);
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) out[name] = sha256Hex(fs.readFileSync(path.join(dir, name)));
  return out;
}

export function options(stateDir: string, urls: string[], extra: Partial<FetchOptions> = {}): FetchOptions {
  return { stateDir, urls, now: () => T0, retryBaseDelayMs: 5, timeoutMs: 2000, ...extra };
}

export const RAW_NAME = `${FIXTURE_SHA256.slice(0, 16)}-ips-v4`;

/** The manifest of the first fetch of the fixture from `url`. */
export function firstManifest(source: string, url: string) {
  return {
    formatVersion: 1,
    source,
    fetchedAt: '2026-11-20T10:00:00Z',
    checkedAt: '2026-11-20T10:00:00Z',
    records: 15,
    rejected: 0,
    coverage: { ipv4: FIXTURE_IPV4_ADDRESSES, ipv6: '0' },
    files: [
      {
        url,
        file: RAW_NAME,
        sha256: FIXTURE_SHA256,
        bytes: 230,
        fetchedAt: '2026-11-20T10:00:00Z',
        records: 15,
        rejected: 0,
        etag: ETAG,
        lastModified: LAST_MODIFIED,
      },
    ],
  };
}

/** Stores a first good snapshot of the fixture; returns its URL. */
export async function seed(server: TestServer, stateDir: string, source: string): Promise<string> {
  server.route('/ips-v4', serveFile(FIXTURE));
  const url = server.url('/ips-v4');
  const result = await fetchSource(cidrSource(source), options(stateDir, [url]));
  if (result.status !== 'updated') throw new Error(`seed fetch failed: ${result.reason}`);
  return url;
}
