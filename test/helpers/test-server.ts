/**
 * A real server for the server tests: a private copy of the demo release, a real accounts store
 * with keys in it (valid, revoked, expired), the app listening on 127.0.0.1:0, and its log lines.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { Test } from 'tap';
import { request as undiciRequest } from 'undici';
import { apiEnvelope, buildApp, type App, type RequestTimeouts } from '../../server/app.js';
import { createServerLogger } from '../../server/observability/log.js';
import { openAccountsStore, type AccountsStore } from '../../accounts/index.js';
import type { AccountsPort } from '../../server/call/keys.js';
import { ReleaseStore, type ReleaseSource } from '../../server/releases/store.js';
import { copyDemoRelease } from './demo-release.js';
import { assertContract } from './contract.js';
import { createTestKey } from './accounts.js';
import { changeFeed } from '../../server/watch/feed.js';

export const CONSOLE_URL = 'https://console.ipscope.test';

export interface TestServerOptions {
  /** false: an empty releases directory (no CURRENT). Default true (the demo release). */
  release?: boolean;
  /** Replaces the release store (e.g. one whose current() throws). */
  releases?: ReleaseSource;
  /** Replaces the real accounts store as the app's key verifier. */
  accounts?: AccountsPort;
  pollMs?: number;
  graceMs?: number;
  /** Plan of the workspace of the valid key (default "free"). */
  plan?: string;
  /** Header and request timeouts (default: the settings' defaults). */
  timeouts?: RequestTimeouts;
}

export interface TestServer {
  url: string;
  port: number;
  app: App;
  releases: ReleaseStore;
  releasesDir: string;
  /** The demo release id (when release is not false). */
  releaseId: string | null;
  store: AccountsStore;
  key: string;
  revokedKey: string;
  expiredKey: string;
  logs: string[];
  get(
    urlPath: string,
    options?: { key?: string | null; headers?: Record<string, string>; method?: string },
  ): Promise<{ status: number; headers: Record<string, string>; text: string; json: () => unknown }>;
  close(): Promise<void>;
}

export async function startTestServer(t: Test, options: TestServerOptions = {}): Promise<TestServer> {
  const dir = t.testdir({});
  const releasesDir = path.join(dir, 'releases');
  let releaseId: string | null = null;
  if (options.release === false) fs.mkdirSync(releasesDir, { recursive: true });
  else releaseId = copyDemoRelease(releasesDir).id;

  const store = openAccountsStore(path.join(dir, 'accounts.sqlite'));
  const valid = await createTestKey(store, { plan: options.plan ?? 'free', label: 'valid' });
  const revoked = await createTestKey(store, { label: 'revoked' });
  await store.revokeKey(revoked.keyId);
  const past = new Date(Date.now() - 3_600_000);
  const expired = await store.createKey(
    { projectId: valid.projectId, label: 'expired', expiresAt: new Date(past.getTime() + 60_000) },
    past,
  );

  const logs: string[] = [];
  const logger = createServerLogger(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logs.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        callback();
      },
    }),
  );
  const releases = new ReleaseStore({
    dir: releasesDir,
    pollMs: options.pollMs ?? 100,
    graceMs: options.graceMs ?? 2_000,
  }).start();
  const served = options.releases ?? releases;
  const accounts = options.accounts ?? store;
  const app = buildApp({
    envelope: apiEnvelope({ releases: served, accounts, logger, changes: changeFeed(store) }),
    releases: served,
    accounts,
    consoleUrl: CONSOLE_URL,
    logger,
    ...(options.timeouts && { timeouts: options.timeouts }),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;

  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
    await releases.close();
    await store.close();
  };
  t.teardown(close);

  return {
    url,
    port,
    app,
    releases,
    releasesDir,
    releaseId,
    store,
    key: valid.key,
    revokedKey: revoked.key,
    expiredKey: expired.key,
    logs,
    close,
    async get(urlPath, requestOptions = {}) {
      const headers: Record<string, string> = { ...requestOptions.headers };
      const key = requestOptions.key === undefined ? valid.key : requestOptions.key;
      if (key !== null) headers.authorization = `Bearer ${key}`;
      const response = await undiciRequest(url + urlPath, {
        method: (requestOptions.method ?? 'GET') as 'GET',
        headers,
      });
      const text = await response.body.text();
      const flat: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers)) {
        if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
      }
      // Every response the suites receive through here validates against /v1/openapi.json.
      assertContract({
        method: requestOptions.method ?? 'GET',
        url: urlPath,
        status: response.statusCode,
        headers: flat,
        body: text,
        origin: headers.origin !== undefined,
      });
      return { status: response.statusCode, headers: flat, text, json: () => JSON.parse(text) as unknown };
    },
  };
}
