/**
 * A replica on Redis listens once its Redis client is connected (server/limits/from-settings.ts
 * `ready`, REDIS_READY_WAIT_MS): a request it answered before would have been counted in the process
 * (the fallback), apart from the other replicas. Redis is reached through a TCP relay that holds
 * every new connection for HOLD_MS before joining it to the test Redis, so a server that listened
 * at once would still be without Redis when it first answers. A Redis that never answers delays
 * the start by REDIS_READY_WAIT_MS, then the server listens anyway and says so.
 */
import net from 'node:net';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Redis } from 'ioredis';
import { createTestKey } from '../../helpers/accounts.js';
import { copyDemoRelease } from '../../helpers/demo-release.js';
import { freePort, get, requireSharedStores, spawnServer, uniqueNamespace } from '../../helpers/limits.js';
import { REDIS_READY_WAIT_MS } from '../../../server/limits/from-settings.js';

/** How long the relay holds a new connection before it reaches Redis. */
const HOLD_MS = 700;

/** A relay to `target` that joins each connection to it only after HOLD_MS. */
async function slowRelay(t: Test, target: URL): Promise<number> {
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((client) => {
    sockets.add(client);
    client.pause();
    client.on('error', () => {});
    setTimeout(() => {
      const upstream = net.connect(Number(target.port), target.hostname, () => {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      sockets.add(upstream);
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
    }, HOLD_MS);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        relay.close(() => resolve());
      }),
  );
  return (relay.address() as net.AddressInfo).port;
}

/** A server (SQLite accounts with one key) whose Redis is on 127.0.0.1:`port`; how long it took to listen. */
async function startOnRedisPort(t: Test, port: number, prefix: string) {
  const dir = t.testdir({});
  const { releasesDir } = copyDemoRelease(path.join(dir, 'releases'));
  const accounts = path.join(dir, 'accounts.sqlite');
  const { key } = await createTestKey(accounts, { workspace: 'ready' });
  const started = Date.now();
  const server = await spawnServer(t, {
    RELEASES_DIR: releasesDir,
    ACCOUNTS_DB: accounts,
    REDIS_URL: `redis://127.0.0.1:${port}`,
    REDIS_KEY_PREFIX: prefix,
  });
  return { server, key, listenedAfter: Date.now() - started };
}

t.test('a replica answers its first request with the counters in Redis', async (t) => {
  const { redisUrl } = requireSharedStores('redis');
  const { prefix } = uniqueNamespace(t, 'redis_ready');
  const port = await slowRelay(t, new URL(redisUrl));
  const { server, key, listenedAfter } = await startOnRedisPort(t, port, prefix);
  t.ok(listenedAfter >= HOLD_MS, `listening after ${listenedAfter} ms, once the relay let it reach Redis`);
  const health = JSON.parse((await get(`${server.url}/health`)).text) as { checks: { cache: string } };
  t.equal(health.checks.cache, 'ok', 'its first /health sees Redis');
  const ping = await get(`${server.url}/v1/ping`, { key });
  t.equal(ping.status, 200);
  t.equal(ping.headers['x-quota-used'], '1');
  // The unit is in Redis's month counter (not in the process's fallback).
  const redis = new Redis(redisUrl);
  t.teardown(() => redis.disconnect());
  const months = await redis.keys(`${prefix}q:*`);
  t.equal(months.length, 1, `one workspace month counter in Redis (${months.join(', ')})`);
  t.equal(await redis.get(months[0]!), '1', 'holding the one request');
});

t.test('a Redis that does not answer delays the start, then the server listens anyway', async (t) => {
  const { prefix } = uniqueNamespace(t, 'redis_absent');
  // A port nothing listens on: every connection is refused.
  const { server, key, listenedAfter } = await startOnRedisPort(t, await freePort(), prefix);
  t.ok(
    listenedAfter >= REDIS_READY_WAIT_MS,
    `listening after ${listenedAfter} ms (waited ${REDIS_READY_WAIT_MS} ms for Redis)`,
  );
  t.match(
    server.output(),
    `redis does not answer after ${REDIS_READY_WAIT_MS} ms: listening anyway; rate limits and quotas hold per replica until it does`,
  );
  const health = JSON.parse((await get(`${server.url}/health`)).text) as { checks: { cache: string } };
  t.equal(health.checks.cache, 'error', '/health says so');
  const ping = await get(`${server.url}/v1/ping`, { key });
  t.equal(ping.status, 200, 'lookups are answered, counted in the process');
  t.equal(ping.headers['x-quota-used'], '1');
});
