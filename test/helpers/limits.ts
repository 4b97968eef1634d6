/**
 * Servers with metering for the limits tests: in-process (`startMeteredServer`: the app with the
 * stores and meter `server serve` builds from settings) or as real `bin/server.js serve` processes
 * (`spawnServer`), plus the PostgreSQL / Redis switches of TEST_DATABASE_URL and TEST_REDIS_URL.
 */
import { assertContract } from './contract.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { request as undiciRequest, type Dispatcher } from 'undici';
import pg from 'pg';
import { Redis } from 'ioredis';
import { loadSettings, type SettingName, type Settings } from '../../shared/config.js';
import { serve } from '../../server/serve.js';
import type { App } from '../../server/app.js';
import type { ServerServices } from '../../server/limits/from-settings.js';
import { copyDemoRelease, ROOT } from './demo-release.js';
import { openAccountsStore } from '../../accounts/index.js';
import { createTestKey } from './accounts.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL ?? '';
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? '';

/**
 * The URLs of the shared-store tests, or an error saying how to get them: `make test` runs tap
 * through scripts/with-test-stores.sh, which starts a throwaway PostgreSQL and Redis when they are
 * not given. These tests are never skipped.
 */
export function requireSharedStores(which: 'database' | 'redis' | 'both' = 'both'): {
  databaseUrl: string;
  redisUrl: string;
} {
  const missing = [
    which !== 'redis' && !TEST_DATABASE_URL ? 'TEST_DATABASE_URL' : null,
    which !== 'database' && !TEST_REDIS_URL ? 'TEST_REDIS_URL' : null,
  ].filter(Boolean);
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(' and ')} not set: run the tests through scripts/with-test-stores.sh ` +
        '(make test does), which starts a throwaway PostgreSQL and Redis',
    );
  }
  return { databaseUrl: TEST_DATABASE_URL, redisUrl: TEST_REDIS_URL };
}

/** A PostgreSQL schema name and Redis key prefix no other test file uses; the schema is dropped at the end. */
export function uniqueNamespace(t: Test, label: string): { schema: string; prefix: string } {
  const id = `${label}_${process.pid}_${randomBytes(4).toString('hex')}`.toLowerCase();
  const schema = `t_${id}`;
  const prefix = `ipscope-test:${id}:`;
  t.teardown(async () => {
    if (TEST_DATABASE_URL) {
      const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
      await client.end();
    }
    if (TEST_REDIS_URL) {
      const redis = new Redis(TEST_REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });
  return { schema, prefix };
}

export interface Answer {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export async function get(
  url: string,
  options: { key?: string | null; headers?: Record<string, string>; dispatcher?: Dispatcher } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const response = await undiciRequest(url, {
    headers,
    ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
  });
  const text = await response.body.text();
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  assertContract({ method: 'GET', url, status: response.statusCode, headers: flat, body: text });
  return { status: response.statusCode, headers: flat, text };
}

export interface MeteredServer {
  url: string;
  app: App;
  services: ServerServices;
  settings: Settings;
  get(urlPath: string, options?: { key?: string | null; headers?: Record<string, string> }): Promise<Answer>;
  /** Stops the app and the services (writing pending counts), as SIGTERM does. */
  close(): Promise<void>;
}

/** The app with the stores and meter of `server serve`, in this process, on 127.0.0.1:0. */
export async function startMeteredServer(
  t: Test,
  overrides: Partial<Record<SettingName, unknown>>,
  releasesDir?: string,
  /** Collects the server's JSON log lines (LOG_LEVEL decides which). */
  logs?: string[],
): Promise<MeteredServer> {
  let dir = releasesDir;
  if (!dir) {
    // Not t.testdir(): calling it again would empty the directory the caller's files are in.
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'metered-server-'));
    t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
    dir = path.join(work, 'releases');
    copyDemoRelease(dir);
  }
  const settings = loadSettings(
    {},
    {
      LOG_LEVEL: 'silent',
      ...overrides,
      RELEASES_DIR: dir,
      RELEASE_POLL_MS: 1_000,
      PORT: 0,
      HOST: '127.0.0.1',
    },
  );
  // The same wiring as `server serve` (stores, meter, release store, app), in this process.
  const destination = logs && {
    write: (chunk: string) => void logs.push(...chunk.split('\n').filter(Boolean)),
  };
  const { url, app, services, stop: close } = await serve(settings, () => {}, destination);
  t.teardown(close);
  return { url, app, services, settings, close, get: (p, o) => get(url + p, o) };
}

/**
 * A metered server with an accounts file of its own holding one Free key, under generous limits
 * (1,000 a minute, 5,000 a month): for comparing two servers request by request.
 */
export async function startKeyedMeteredServer(
  t: Test,
  overrides: Partial<Record<SettingName, unknown>> = {},
  logs?: string[],
): Promise<{ server: MeteredServer; key: string }> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'metered-accounts-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const file = path.join(work, 'accounts.sqlite');
  const store = openAccountsStore(file);
  const key = await createTestKey(store, {});
  await store.close();
  const server = await startMeteredServer(
    t,
    {
      ACCOUNTS_DB: file,
      FREE_REQUESTS_PER_MINUTE: 1000,
      FREE_MONTHLY_QUOTA: 5000,
      ...overrides,
    },
    undefined,
    logs,
  );
  return { server, key: key.key };
}

export interface SpawnedServer {
  url: string;
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

/** `bin/server.js serve --port 0` with `env`; resolves once it prints its address. */
export async function spawnServer(t: Test, env: Record<string, string>): Promise<SpawnedServer> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/server.js'), 'serve', '--port', '0'], {
    env: { ...process.env, LOG_LEVEL: 'warn', WORKERS: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(text);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}:\n${text}`)));
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  t.teardown(stop);
  return { url, child, output: () => text, stop };
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs the server CLI (`bin/server.js …args`) and returns its output, failing on a non-zero exit. */
export async function serverCli(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [path.join(ROOT, 'bin/server.js'), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => (text += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (text += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`server ${args.join(' ')} exited ${code}:\n${text}`);
  return text;
}

/**
 * Waits until at least `seconds` of the current UTC minute are left, so that a burst stays in one
 * fixed minute window; returns the start of that window (epoch ms).
 */
export async function awaitMinuteRoom(seconds: number): Promise<number> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((resolve) => setTimeout(resolve, left + 50));
  const now = Date.now();
  return now - (now % 60_000);
}
