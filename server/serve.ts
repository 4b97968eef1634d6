/**
 * One process of the server (`server serve`, or one worker of `--workers N`): the releases it
 * follows, its accounts store and limits (server/limits/from-settings.ts), the call envelope they
 * make, the web console (console/) and the API (server/app.ts) over that one envelope, and the
 * metrics port. The composition happens here once, in this order.
 */
import type { pino } from 'pino';
import type { Settings } from '../shared/config.js';
import { createMailer } from '../console/mailer.js';
import { startConsole, type RunningConsole } from '../console/serve.js';
import { apiEnvelope, buildApp, type App } from './app.js';
import { consoleOrigin } from './http/origin.js';
import { trustProxyOption } from './limits/client-address.js';
import { createServerServices, type ServerServices, type SharedByPrimary } from './limits/from-settings.js';
import { createServerLogger } from './observability/log.js';
import { RequestMetrics, offerWorkerMetrics, startMetricsServer } from './observability/metrics.js';
import { ReleaseStore } from './releases/store.js';
import { guardOfSettings } from './watch/ssrf.js';
import { changeFeed } from './watch/feed.js';
import { WatchService } from './watch/service.js';

/** How one process of a `--workers N` server differs from a single one (server/cluster/). */
export interface WorkerRole {
  /** Counters and refused-key throttle of the primary process (absent with Redis). */
  primary?: SharedByPrimary;
}

export interface RunningServer {
  url: string;
  app: App;
  services: ServerServices;
  releases: ReleaseStore;
  /** Watch events of new releases and webhook deliveries (server/watch/service.ts). */
  watch: WatchService;
  /** The console's origin, when CONSOLE_URL is set. */
  consoleUrl: string | null;
  /** The /metrics URL when METRICS_PORT is set. */
  metricsUrl: string | null;
  stop: () => Promise<void>;
}

/** Starts the server; resolves once it listens, with a function that stops it gracefully. */
export async function serve(
  settings: Settings,
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  /** Where the JSON log lines go (default: stdout). */
  logDestination?: pino.DestinationStream,
  /** Set in a worker of `--workers N`: the primary counts, and says when to swap releases. */
  worker?: WorkerRole,
): Promise<RunningServer> {
  consoleOrigin(settings.CONSOLE_URL); // a malformed CONSOLE_URL fails here, before anything is opened
  const webhookGuard = guardOfSettings(settings); // and so does a malformed WEBHOOK_ALLOWED_ADDRESSES
  // A worker's lines say which process wrote them (one server process needs no pid).
  const base = worker ? { service: 'ipscope-server', pid: process.pid } : { service: 'ipscope-server' };
  const logger = createServerLogger({ level: settings.LOG_LEVEL, base }, logDestination);
  const limitsLog = logger.child({ component: 'limits' });
  const services = createServerServices(
    settings,
    (message, err) => (err === undefined ? limitsLog.info(message) : limitsLog.warn({ err }, message)),
    worker?.primary,
  );
  const releases = new ReleaseStore({
    dir: settings.RELEASES_DIR,
    pollMs: settings.RELEASE_POLL_MS,
    log: logger.child({ component: 'releases' }),
    follow: worker ? 'manual' : 'poll',
  }).start();
  const metrics = settings.METRICS_PORT === '' ? undefined : new RequestMetrics();
  // Every keyed call, the console's playground runs included, goes through this one envelope.
  const envelope = apiEnvelope({
    releases,
    accounts: services.accounts,
    meter: services.meter,
    refusedKeys: services.refusedKeys,
    logger,
    metrics,
    changes: changeFeed(services.store),
  });
  let webConsole: RunningConsole | null = null;
  if (settings.CONSOLE_URL) {
    try {
      webConsole = await startConsole(
        settings,
        services.store,
        envelope,
        logger,
        trustProxyOption(settings.TRUST_PROXY),
        services.shared,
      );
    } catch (error) {
      await releases.close();
      await services.close();
      throw error;
    }
  }
  const app = buildApp({
    envelope,
    releases,
    accounts: services.accounts,
    cache: services.cache,
    trustProxy: trustProxyOption(settings.TRUST_PROXY),
    consoleUrl: webConsole?.url ?? settings.CONSOLE_URL,
    logger,
    timeouts: { headersMs: settings.HEADERS_TIMEOUT_MS, requestMs: settings.REQUEST_TIMEOUT_MS },
    metrics,
  });
  try {
    // The counters shared with the other replicas first (a few ms; at most REDIS_READY_WAIT_MS).
    await services.ready();
    await app.listen({ port: settings.PORT, host: settings.HOST });
  } catch (error) {
    await webConsole?.close();
    await releases.close();
    await services.close();
    throw new Error(`cannot listen on ${settings.HOST}:${settings.PORT}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : settings.PORT;
  const host = settings.HOST.includes(':') ? `[${settings.HOST}]` : settings.HOST;
  const url = `http://${host}:${port}`;
  out(`listening on ${url}`);
  webConsole?.setApiUrl(url);
  if (webConsole) out(`console on ${webConsole.url} (mail to ${webConsole.mailer.destination})`);
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | null = null;
  // A worker's numbers are served by its primary, summed with the other workers'.
  if (metrics && worker) offerWorkerMetrics({ metrics, releases, stateDir: settings.STATE_DIR });
  else if (metrics) {
    try {
      metricsServer = await startMetricsServer({
        metrics,
        releases,
        stateDir: settings.STATE_DIR,
        host: settings.HOST,
        port: Number(settings.METRICS_PORT),
      });
    } catch (error) {
      // Everything started so far, the console included.
      await webConsole?.close();
      await app.close();
      await releases.close();
      await services.close();
      throw new Error(`cannot listen on METRICS_PORT ${settings.METRICS_PORT}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    out(`metrics on ${metricsServer.url}`);
  }
  // Started once the release is loaded and the API listens; each process (worker, replica) runs
  // one, and the run and delivery leases of the accounts store share the work between them.
  const watchLog = logger.child({ component: 'watch' });
  const mailer =
    webConsole?.mailer ??
    createMailer({
      smtpUrl: settings.SMTP_URL,
      from: settings.MAIL_FROM,
      outbox: settings.CONSOLE_OUTBOX,
      log: (message, fields) => watchLog.warn(fields ?? {}, message),
    });
  const watch = new WatchService({
    store: services.store,
    releasesDir: settings.RELEASES_DIR,
    current: () => releases.current(),
    deliver: settings.WEBHOOK_DELIVERY === 'on',
    intervalMs: settings.WEBHOOK_POLL_MS,
    schedule: settings.WEBHOOK_RETRY_SCHEDULE_MS,
    leaseMs: settings.WEBHOOK_LEASE_MS,
    runLeaseMs: settings.WATCH_RUN_LEASE_MS,
    guard: webhookGuard,
    mailer,
    log: (level, message, fields) => watchLog[level](fields ?? {}, message),
  }).start();
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await webConsole?.close();
      // The round in progress ends (an attempt in flight is recorded) while requests drain.
      await Promise.all([app.close(), watch.stop()]);
      if (!webConsole) mailer.close();
      await metricsServer?.close();
      await releases.close();
      await services.close();
    })());
  return {
    url,
    metricsUrl: metricsServer?.url ?? null,
    app,
    services,
    releases,
    watch,
    consoleUrl: webConsole?.url ?? null,
    stop,
  };
}
