/**
 * Prometheus metrics (prom-client) on an operator-enabled port (METRICS_PORT; off by default),
 * docs/decisions/0020. The request path only increments numbers in preallocated arrays
 * (`RequestMetrics.observe`: no allocation, no label hashing); prom-client's registry reads them
 * when /metrics is scraped, through metric objects of its own shape (name, help, type, get()).
 *
 * Exposed: ipscope_http_requests_total{route,status}, ipscope_http_request_duration_seconds
 * {route} (histogram), ipscope_release_info{id}, ipscope_release_age_seconds,
 * ipscope_metering_refusals_total{reason}, the process metrics of prom-client, and the builder's
 * own file (<STATE_DIR>/builder.prom: runs and durations per feed, collector outcomes).
 */
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { AggregatorRegistry, collectDefaultMetrics, Registry } from 'prom-client';
import type { ReleaseHealth } from '../releases/store.js';

/** Upper bounds of the latency histogram, in seconds. */
export const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const STATUSES = 600;
export const BUILDER_METRICS_FILE = 'builder.prom';

interface RouteStats {
  label: string;
  statuses: Float64Array;
  buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * How the primary of `--workers N` joins the workers' values of a metric (prom-client's
 * AggregatorRegistry): counts add up, the release gauges are the same in every worker.
 */
type Aggregator = 'sum' | 'max';

/** A metric object of the shape prom-client's Registry takes. */
interface CollectedMetric {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  aggregator: Aggregator;
  get(): { name: string; help: string; type: string; aggregator: Aggregator; values: MetricValue[] };
  reset(): void;
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

function collected(
  name: string,
  help: string,
  type: CollectedMetric['type'],
  values: () => MetricValue[],
  aggregator: Aggregator = 'sum',
): CollectedMetric {
  return {
    name,
    help,
    type,
    aggregator,
    get: () => ({ name, help, type, aggregator, values: values() }),
    reset: () => {},
  };
}

export const METERING_REFUSALS = ['rate_limited', 'quota_exceeded', 'project_cap_exceeded'] as const;
export type MeteringRefusal = (typeof METERING_REFUSALS)[number];

export class RequestMetrics {
  private readonly routes: RouteStats[] = [];
  private readonly byLabel = new Map<string, number>();
  private readonly refusals = new Float64Array(METERING_REFUSALS.length);

  /** The index of a route label (a path template such as /v1/ip/{ip}); call once per route. */
  route(label: string): number {
    let index = this.byLabel.get(label);
    if (index === undefined) {
      index = this.routes.length;
      this.byLabel.set(label, index);
      this.routes.push({
        label,
        statuses: new Float64Array(STATUSES),
        buckets: new Float64Array(LATENCY_BUCKETS.length),
        sum: 0,
        count: 0,
      });
    }
    return index;
  }

  /** One answered request: the hot path (array increments only). */
  observe(route: number, status: number, seconds: number): void {
    const stats = this.routes[route]!;
    stats.statuses[status >= 0 && status < STATUSES ? status : 0]! += 1;
    stats.sum += seconds;
    stats.count += 1;
    const buckets = stats.buckets;
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= LATENCY_BUCKETS[i]!) {
        buckets[i]! += 1;
        break;
      }
    }
  }

  /** A refusal of the meter, by its error code (a bound function: the envelope calls it). */
  readonly meteringRefused = (code: string): void => {
    const index = METERING_REFUSALS.indexOf(code as MeteringRefusal);
    if (index >= 0) this.refusals[index]! += 1;
  };

  /** The prom-client metric objects reading these numbers. */
  collectors(): CollectedMetric[] {
    return [
      collected(
        'ipscope_http_requests_total',
        'HTTP requests answered, by route and status.',
        'counter',
        () =>
          this.routes.flatMap((r) => {
            const values: MetricValue[] = [];
            r.statuses.forEach((n, status) => {
              if (n > 0) values.push({ value: n, labels: { route: r.label, status } });
            });
            return values;
          }),
      ),
      collected(
        'ipscope_http_request_duration_seconds',
        'Time from the request to the end of the response, by route.',
        'histogram',
        () =>
          this.routes
            .filter((r) => r.count > 0)
            .flatMap((r) => {
              let cumulative = 0;
              const values: MetricValue[] = LATENCY_BUCKETS.map((le, i) => {
                cumulative += r.buckets[i]!;
                return {
                  metricName: 'ipscope_http_request_duration_seconds_bucket',
                  value: cumulative,
                  labels: { route: r.label, le },
                };
              });
              values.push(
                {
                  metricName: 'ipscope_http_request_duration_seconds_bucket',
                  value: r.count,
                  labels: { route: r.label, le: '+Inf' },
                },
                {
                  metricName: 'ipscope_http_request_duration_seconds_sum',
                  value: r.sum,
                  labels: { route: r.label },
                },
                {
                  metricName: 'ipscope_http_request_duration_seconds_count',
                  value: r.count,
                  labels: { route: r.label },
                },
              );
              return values;
            }),
      ),
      collected(
        'ipscope_metering_refusals_total',
        'Calls refused by the meter (429 rate_limited, 402 quota_exceeded, 402 project_cap_exceeded).',
        'counter',
        () => METERING_REFUSALS.map((reason, i) => ({ value: this.refusals[i]!, labels: { reason } })),
      ),
    ];
  }
}

export interface MetricsServerOptions {
  metrics: RequestMetrics;
  releases: { health(): ReleaseHealth };
  /** The builder's state directory: its builder.prom is served too when present. */
  stateDir: string;
  host: string;
  port: number;
}

/** The registry of a server: request metrics, release, process metrics. */
export function createRegistry(options: Omit<MetricsServerOptions, 'host' | 'port'>): Registry {
  const registry = new Registry();
  for (const metric of options.metrics.collectors()) registry.registerMetric(metric as never);
  registry.registerMetric(
    collected(
      'ipscope_release_info',
      'The release served (its id as a label; 1).',
      'gauge',
      () => {
        const health = options.releases.health();
        return health.id === null ? [] : [{ value: 1, labels: { id: health.id } }];
      },
      'max',
    ) as never,
  );
  registry.registerMetric(
    collected(
      'ipscope_release_age_seconds',
      'Seconds since the release served was built (absent without a release).',
      'gauge',
      () => {
        const age = options.releases.health().age_seconds;
        return age === null ? [] : [{ value: age, labels: {} }];
      },
      'max',
    ) as never,
  );
  collectDefaultMetrics({ register: registry, prefix: 'ipscope_' });
  return registry;
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** The /metrics listener of one server process; resolves with its URL and a close function. */
export function startMetricsServer(options: MetricsServerOptions): Promise<MetricsListener> {
  const registry = createRegistry(options);
  return listenForScrapes(options, () => registry.metrics(), registry.contentType);
}

/**
 * In a worker of `--workers N`, first thing: answer the primary's scrapes over IPC (with an empty
 * registry until offerWorkerMetrics), so that a scrape while a worker starts does not wait for it.
 */
export function answerClusterScrapes(): void {
  AggregatorRegistry.setRegistries(new Registry());
  new AggregatorRegistry(); // adds the listener (once)
}

/**
 * In a worker of `--workers N`: the primary's /metrics asks every worker for its registry over IPC
 * and serves their sum (startClusterMetricsServer); the worker opens no port of its own.
 */
export function offerWorkerMetrics(options: Omit<MetricsServerOptions, 'host' | 'port'>): void {
  AggregatorRegistry.setRegistries(createRegistry(options));
}

/** In the primary of `--workers N`: /metrics of all workers together (request counts summed). */
export function startClusterMetricsServer(
  options: Pick<MetricsServerOptions, 'stateDir' | 'host' | 'port'>,
): Promise<MetricsListener> {
  const aggregator = new AggregatorRegistry();
  return listenForScrapes(options, () => aggregator.clusterMetrics(), aggregator.contentType);
}

/** GET /metrics: the text of `collect`, then the builder's file when there is one. */
async function listenForScrapes(
  options: Pick<MetricsServerOptions, 'stateDir' | 'host' | 'port'>,
  collect: () => Promise<string>,
  contentType: string,
): Promise<MetricsListener> {
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    collect().then(
      (text) => {
        let builder = '';
        try {
          builder = fs.readFileSync(path.join(options.stateDir, BUILDER_METRICS_FILE), 'utf8');
        } catch {
          // No builder has run with this state directory on this machine.
        }
        res.writeHead(200, { 'content-type': contentType });
        res.end(builder ? `${text.trimEnd()}\n${builder}` : text);
      },
      (error: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${error.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as { port: number };
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${address.port}/metrics`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
