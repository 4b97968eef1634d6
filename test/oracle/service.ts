/**
 * The service side of the oracle harness, used as a black box: `bin/builder.js import` and
 * `release` as separate processes, then the real app (fast lane on) on 127.0.0.1:0 with an
 * accounts store and a key, as test/helpers/test-server.ts starts it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { apiEnvelope, buildApp } from '../../server/app.js';
import { openAccountsStore } from '../../accounts/index.js';
import { ReleaseStore } from '../../server/releases/store.js';
import { createTestKey } from '../helpers/accounts.js';
import type { ImportWindow } from './harness.js';

/** The repository root, from the .ts source or its compiled copy under dist/. */
export const ROOT = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
})();

export function builder(
  stateDir: string,
  releasesDir: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): string {
  const r = spawnSync(
    process.execPath,
    [path.join(ROOT, 'bin/builder.js'), '--state-dir', stateDir, '--releases-dir', releasesDir, ...args],
    { encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 },
  );
  if (r.status !== 0)
    throw new Error(`builder ${args.slice(0, 2).join(' ')} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** ISO 8601 with whole seconds, rounded down or up. */
export function isoSeconds(ms: number, round: 'down' | 'up'): string {
  const s = round === 'down' ? Math.floor(ms / 1000) : Math.ceil(ms / 1000);
  return new Date(s * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Imports every kind of the manifest, then publishes a release; returns the import time window. */
export function importAndRelease(
  stateDir: string,
  releasesDir: string,
  manifest: Record<string, string[]>,
  env: NodeJS.ProcessEnv,
): ImportWindow {
  const start = Date.now();
  for (const [kind, files] of Object.entries(manifest))
    builder(stateDir, releasesDir, ['import', kind, ...files], env);
  const end = Date.now();
  builder(stateDir, releasesDir, ['release'], env);
  return { start: isoSeconds(start, 'down'), end: isoSeconds(end, 'up') };
}

export interface Service {
  url: string;
  key: string;
  close(): Promise<void>;
}

/** The real app serving releasesDir, with a fresh accounts store in workDir and one free-plan key. */
export async function startService(releasesDir: string, workDir: string): Promise<Service> {
  const store = openAccountsStore(path.join(workDir, 'accounts.sqlite'));
  const { key } = await createTestKey(store, { label: 'oracle' });
  const releases = new ReleaseStore({ dir: releasesDir, pollMs: 100, graceMs: 2_000 }).start();
  const logger = pino({ level: 'silent' });
  const app = buildApp({
    envelope: apiEnvelope({ releases, accounts: store, logger }),
    releases,
    accounts: store,
    consoleUrl: 'https://console.ipscope.test',
    logger,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url,
    key,
    async close() {
      await app.close();
      await releases.close();
      await store.close();
    },
  };
}
