/** `npx server …`: serve the API (`serve`) and manage API keys (`keys …`, from accounts). */
import cluster from 'node:cluster';
import { Command, InvalidArgumentError } from 'commander';
import { loadSettings, type SettingName, type Settings } from '../shared/config.js';
import { registerAccountCommands } from '../accounts/index.js';
import { registerInviteCommand } from '../console/cli-invite.js';
import { runPrimary, workerCount } from './cluster/supervisor.js';
import { runWorker } from './cluster/worker.js';
import { serve } from './serve.js';
import { applyServerV8Flags } from './v8-flags.js';

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
      if (cluster.isWorker) return runWorker(settings);
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
