/** `npx server …`: serve the API (`serve`) and manage API keys (`keys …`, from accounts). */
import cluster from 'node:cluster';
import { Command, InvalidArgumentError } from 'commander';
import type { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadSettings, type SettingName, type Settings } from '../shared/config.js';
import { registerAccountCommands } from '../accounts/index.js';
import { trustProxyOption } from './limits/client-address.js';
import { createServerServices, type ServerServices, type SharedByPrimary } from './limits/from-settings.js';
import { buildApp } from './app.js';
import { consoleOrigin } from './http/origin.js';
import { ReleaseStore } from './releases/store.js';
import { runPrimary, workerCount } from './cluster/supervisor.js';
import { runWorker } from './cluster/worker.js';
import { applyServerV8Flags } from './v8-flags.js';
import { createServerLogger } from './observability/log.js';
import type { Envelope } from './call/envelope.js';
import { registerInviteCommand } from '../console/cli-invite.js';
import { startConsole, type RunningConsole } from '../console/serve.js';
import { RequestMetrics, offerWorkerMetrics, startMetricsServer } from './observability/metrics.js';

interface ServeOptions {
  port?: number;
  host?: string;
  releasesDir?: string;
  consoleUrl?: string;
  consolePort?: number;
  logLevel?: string;
  accountsDb?: string;
  workers?: number;
}

function portArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port from 0 to 65535');
  return n;
}

function countArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 256) throw new InvalidArgumentError('expected a number from 0 to 256');
  return n;
}

function settingsFrom(options: ServeOptions): Settings {
  const overrides: Partial<Record<SettingName, unknown>> = {};
  if (options.port !== undefined) overrides.PORT = options.port;
  if (options.host) overrides.HOST = options.host;
  if (options.releasesDir) overrides.RELEASES_DIR = options.releasesDir;
  if (options.accountsDb) overrides.ACCOUNTS_DB = options.accountsDb;
  if (options.consoleUrl !== undefined) overrides.CONSOLE_URL = options.consoleUrl;
  if (options.consolePort !== undefined) overrides.CONSOLE_PORT = options.consolePort;
  if (options.logLevel) overrides.LOG_LEVEL = options.logLevel;
  if (options.workers !== undefined) overrides.WORKERS = options.workers;
  return loadSettings(process.env, overrides);
}

/** How one process of a `--workers N` server differs from a single one (server/cluster/). */
export interface WorkerRole {
  /** Counters and refused-key throttle of the primary process (absent with Redis). */
  primary?: SharedByPrimary;
}

export interface RunningServer {
  url: string;
  app: FastifyInstance;
  services: ServerServices;
  releases: ReleaseStore;
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
  // The console's playground calls through the API's envelope, which exists once the API app does.
  let envelope: Envelope | null = null;
  let webConsole: RunningConsole | null = null;
  if (settings.CONSOLE_URL) {
    try {
      webConsole = await startConsole(
        settings,
        services.store,
        { call: (...args) => envelope!.call(...args) },
        logger,
        trustProxyOption(settings.TRUST_PROXY),
      );
    } catch (error) {
      await releases.close();
      await services.close();
      throw error;
    }
  }
  const metrics = settings.METRICS_PORT === '' ? undefined : new RequestMetrics();
  const app = buildApp({
    releases,
    accounts: services.accounts,
    meter: services.meter,
    refusedKeys: services.refusedKeys,
    cache: services.cache,
    trustProxy: trustProxyOption(settings.TRUST_PROXY),
    consoleUrl: webConsole?.url ?? settings.CONSOLE_URL,
    logger,
    fastLane: settings.FAST_LANE === 'on',
    timeouts: { headersMs: settings.HEADERS_TIMEOUT_MS, requestMs: settings.REQUEST_TIMEOUT_MS },
    metrics,
  });
  envelope = app.callEnvelope;
  try {
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
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      await webConsole?.close();
      await app.close();
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
    consoleUrl: webConsole?.url ?? null,
    stop,
  };
}

export function buildProgram(): Command {
  const program = new Command('server')
    .description(
      'Serves the lookup API (REST /v1, /health, /v1/openapi.json, /llms-full.txt) and manages API keys.',
    )
    .option(
      '--accounts-db <file>',
      'accounts store, an SQLite file created when missing (env ACCOUNTS_DB, default ./accounts.sqlite)',
    )
    .showHelpAfterError();

  program
    .command('serve')
    .description('Serve the API from the current release, swapping to each new release as it is published.')
    .option('--port <port>', 'TCP port, 0 for any free one (env PORT, default 8080)', portArg)
    .option('--host <host>', 'address to listen on (env HOST, default 127.0.0.1)')
    .option(
      '--releases-dir <dir>',
      'releases directory holding CURRENT (env RELEASES_DIR, default ./releases)',
    )
    .option(
      '--console-url <url>',
      'origin of the web console, served on --console-port, the only browser origin allowed (env CONSOLE_URL)',
    )
    .option('--console-port <port>', 'TCP port of the web console (env CONSOLE_PORT, default 8081)', portArg)
    .option(
      '--log-level <level>',
      'fatal, error, warn, info, debug, trace or silent (env LOG_LEVEL, default info)',
    )
    .option(
      '--workers <n>',
      'server processes sharing the port, 0 for one per available core (env WORKERS, default 0); 1: a single process',
      countArg,
    )
    .action(async (options: ServeOptions, command: Command) => {
      const settings = settingsFrom({ ...command.optsWithGlobals<ServeOptions>(), ...options });
      // Before any request code runs (server/v8-flags.ts).
      applyServerV8Flags();
      if (cluster.isWorker) return runWorker(settings, serve);
      const workers = workerCount(settings.WORKERS);
      if (workers > 1) return runPrimary(settings, workers);
      const server = await serve(settings);
      let signals = 0;
      const shutdown = (signal: NodeJS.Signals) => {
        signals += 1;
        if (signals > 1) {
          console.error(`server: ${signal} again, exiting without waiting`);
          process.exit(1);
        }
        console.error(`server: ${signal}, closing (waiting for requests in flight)`);
        server.stop().then(
          () => process.exit(0),
          (error: Error) => {
            console.error(`server: close failed: ${error.message}`);
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', shutdown);
      process.on('SIGINT', shutdown);
    });

  registerAccountCommands(program);
  registerInviteCommand(program);
  return program;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await buildProgram().parseAsync(argv);
  } catch (error) {
    console.error(`server: ${(error as Error).message}`);
    process.exitCode = process.exitCode || 2;
  }
}
