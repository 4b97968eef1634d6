/**
 * GET /metrics on METRICS_PORT (the server of `server serve`, in this process), parsed by a strict
 * Prometheus text-format (0.0.4) parser written here, independent of prom-client: requests by
 * route and status from the fast lane and from Fastify under the same labels, latency histograms,
 * the release id and age, metering refusals, and the builder's file (runs, feeds, collector).
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { loadSettings } from '../../shared/config.js';
import { measuredRun, recordFigures } from '../../builder/metrics.js';
import { serve } from '../../server/serve.js';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { parsePrometheus, value } from '../helpers/prometheus.js';

t.test('GET /metrics', async (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'metrics-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const { releasesDir, id } = copyDemoRelease(path.join(work, 'releases'));
  const stateDir = path.join(work, 'state');
  await measuredRun(stateDir, 'fetch', () => {});
  await recordFigures(stateDir, {
    feeds: [{ feed: 'aws', status: 'updated', seconds: 1.5 }],
    collector: { positive: 7, timeout: 2 },
  });
  const accounts = path.join(work, 'accounts.sqlite');
  const { key } = await createTestKey(accounts, {});
  const settings = loadSettings(
    {},
    {
      ACCOUNTS_DB: accounts,
      RELEASES_DIR: releasesDir,
      STATE_DIR: stateDir,
      PORT: 0,
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      FREE_REQUESTS_PER_MINUTE: 5,
    },
  );
  const server = await serve(settings, () => {});
  t.teardown(server.stop);
  t.match(server.metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  const ask = async (p: string, withKey = true) => {
    const r = await request(server.url + p, {
      headers: withKey ? { authorization: `Bearer ${key}` } : {},
    });
    await r.body.dump();
    return r.statusCode;
  };
  // Fast lane (plain lookups), Fastify (a query string), 404, 401, then the 5/min limit: 429s.
  const statuses = [
    await ask('/v1/ip/104.16.132.229'),
    await ask('/v1/ip/104.16.132.229'),
    await ask('/v1/asn/AS13335?limit=2'),
    await ask('/nowhere'),
    await ask('/v1/ping', false),
    await ask('/health', false),
    await ask('/v1/ip/104.16.132.229'),
    await ask('/v1/ip/104.16.132.229'),
    await ask('/v1/ip/104.16.132.229'),
    await ask('/v1/ip/104.16.132.229'),
  ];
  t.same(statuses, [200, 200, 200, 404, 401, 200, 200, 200, 429, 429]);

  const scrape = await request(server.metricsUrl!);
  t.equal(scrape.statusCode, 200);
  t.match(scrape.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  const { types, samples } = parsePrometheus(await scrape.body.text());
  t.equal(types.get('ipscope_http_requests_total'), 'counter');
  t.equal(types.get('ipscope_http_request_duration_seconds'), 'histogram');
  const requests = (route: string, status: string) =>
    value(samples, 'ipscope_http_requests_total', { route, status });
  t.equal(requests('/v1/ip/{ip}', '200'), 4, 'fast lane and Fastify under one label');
  t.equal(requests('/v1/ip/{ip}', '429'), 2);
  t.equal(requests('/v1/asn/{asn}', '200'), 1);
  t.equal(requests('unmatched', '404'), 1);
  t.equal(requests('/v1/ping', '401'), 1);
  t.equal(requests('/health', '200'), 1);
  const count = value(samples, 'ipscope_http_request_duration_seconds_count', { route: '/v1/ip/{ip}' });
  t.equal(count, 6);
  t.equal(
    value(samples, 'ipscope_http_request_duration_seconds_bucket', { route: '/v1/ip/{ip}', le: '+Inf' }),
    6,
  );
  const buckets = samples
    .filter(
      (s) => s.name === 'ipscope_http_request_duration_seconds_bucket' && s.labels.route === '/v1/ip/{ip}',
    )
    .map((s) => s.value);
  t.same(
    buckets,
    [...buckets].sort((a, b) => a - b),
    'cumulative buckets',
  );
  t.equal(value(samples, 'ipscope_metering_refusals_total', { reason: 'rate_limited' }), 2);
  t.equal(value(samples, 'ipscope_metering_refusals_total', { reason: 'quota_exceeded' }), 0);
  t.equal(value(samples, 'ipscope_release_info', { id }), 1);
  t.ok(value(samples, 'ipscope_release_age_seconds', {})! > 0, 'release age');
  t.equal(value(samples, 'ipscope_builder_runs_total', { command: 'fetch', result: 'ok' }), 1);
  t.equal(value(samples, 'ipscope_builder_feed_fetches_total', { feed: 'aws', status: 'updated' }), 1);
  t.equal(value(samples, 'ipscope_builder_feed_last_seconds', { feed: 'aws' }), 1.5);
  t.equal(value(samples, 'ipscope_builder_collector_answers_total', { outcome: 'timeout' }), 2);
  t.ok(value(samples, 'ipscope_process_resident_memory_bytes', {})! > 0, 'process metrics');

  const other = await request(server.metricsUrl!.replace('/metrics', '/other'));
  t.equal(other.statusCode, 404);
  await other.body.dump();
});

t.test('metrics off by default', async (t) => {
  t.equal(loadSettings({}).METRICS_PORT, '');
  t.throws(() => loadSettings({ METRICS_PORT: '70000' }), /METRICS_PORT/);
});
