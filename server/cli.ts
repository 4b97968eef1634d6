/** `npx server …`: serve the API (`serve`) and manage API keys (`keys …`, from server/accounts). */
import { Command, InvalidArgumentError } from 'commander';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { loadSettings, type SettingName, type Settings } from '../shared/config.js';
import { registerAccountCommands } from './accounts/index.js';
import { trustProxyOption } from './limits/client-address.js';
import { createServerServices, type ServerServices } from './limits/services.js';
import { buildApp } from './app.js';
import { consoleOrigin } from './browser-origin.js';
import { ReleaseStore } from './release-store.js';
import { RequestMetrics, startMetricsServer } from './metrics.js';

interface ServeOptions {
  port?: number;
  host?: string;
  releasesDir?: string;
  consoleUrl?: string;
  logLevel?: string;
  accountsDb?: string;
}

function portArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port from 0 to 65535');
  return n;
}

function settingsFrom(options: ServeOptions): Settings {
  const overrides: Partial<Record<SettingName, unknown>> = {};
  if (options.port !== undefined) overrides.PORT = options.port;
  if (options.host) overrides.HOST = options.host;
  if (options.releasesDir) overrides.RELEASES_DIR = options.releasesDir;
  if (options.accountsDb) overrides.ACCOUNTS_DB = options.accountsDb;
  if (options.consoleUrl !== undefined) overrides.CONSOLE_URL = options.consoleUrl;
  if (options.logLevel) overrides.LOG_LEVEL = options.logLevel;
  return loadSettings(process.env, overrides);
}

/** Starts the server; resolves once it listens, with a function that stops it gracefully. */
export async function serve(
  settings: Settings,
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  /** Where the JSON log lines go (default: stdout). */
  logDestination?: pino.DestinationStream,
): Promise<{
  url: string;
  /** The /metrics URL when METRICS_PORT is set. */
  metricsUrl: string | null;
  app: FastifyInstance;
  services: ServerServices;
  stop: () => Promise<void>;
}> {
  consoleOrigin(settings.CONSOLE_URL); // a malformed CONSOLE_URL fails here, before anything is opened
  const logger = pino({ level: settings.LOG_LEVEL, base: { service: 'ipscope-server' } }, logDestination);
  const limitsLog = logger.child({ component: 'limits' });
  const services = createServerServices(settings, (message, err) =>
    err === undefined ? limitsLog.info(message) : limitsLog.warn({ err }, message),
  );
  const releases = new ReleaseStore({
    dir: settings.RELEASES_DIR,
    pollMs: settings.RELEASE_POLL_MS,
    log: logger.child({ component: 'releases' }),
  }).start();
  const metrics = settings.METRICS_PORT === '' ? undefined : new RequestMetrics();
  const app = buildApp({
    releases,
    accounts: services.accounts,
    meter: services.meter,
    refusedKeys: services.refusedKeys,
    cache: services.cache,
    trustProxy: trustProxyOption(settings.TRUST_PROXY),
    consoleUrl: settings.CONSOLE_URL,
    logger,
    fastLane: settings.FAST_LANE === 'on',
    metrics,
  });
  try {
    await app.listen({ port: settings.PORT, host: settings.HOST });
  } catch (error) {
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
  let metricsServer: Awaited<ReturnType<typeof startMetricsServer>> | null = null;
  if (metrics) {
    try {
      metricsServer = await startMetricsServer({
        metrics,
        releases,
        stateDir: settings.STATE_DIR,
        host: settings.HOST,
        port: Number(settings.METRICS_PORT),
      });
    } catch (error) {
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
      await app.close();
      await metricsServer?.close();
      await releases.close();
      await services.close();
    })());
  return { url, metricsUrl: metricsServer?.url ?? null, app, services, stop };
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
      'origin of the web console, the only browser origin allowed (env CONSOLE_URL)',
    )
    .option(
      '--log-level <level>',
      'fatal, error, warn, info, debug, trace or silent (env LOG_LEVEL, default info)',
    )
    .action(async (options: ServeOptions, command: Command) => {
      const settings = settingsFrom({ ...command.optsWithGlobals<ServeOptions>(), ...options });
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
