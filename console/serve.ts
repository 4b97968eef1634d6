/**
 * Starts the web console next to the API when CONSOLE_URL is set: its own Fastify app on
 * CONSOLE_PORT (HOST), mail through SMTP_URL or to CONSOLE_OUTBOX. A CONSOLE_URL whose port is 0
 * takes the port the console got (tests and local runs on any free port).
 */
import http from 'node:http';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Settings } from '../shared/config.js';
import type { AccountsStore } from '../accounts/index.js';
import type { Envelope } from '../server/call/envelope.js';
import { PlanBook, freePlan } from '../server/limits/plans.js';
import { guardOfSettings } from '../server/watch/ssrf.js';
import type { SharedStore } from '../server/limits/window-limiter.js';
import { buildConsole } from './app.js';
import type { ConsoleOptions } from './deps.js';

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '::1', '[::1]']);

/**
 * A console at a loopback address on a loopback host (`make demo`) answers on every loopback name
 * (localhost, 127.0.0.1, [::1]), as its Origin check accepts them (security.ts): listening on
 * 127.0.0.1 it also listens on ::1 at the same port (and the other way round), handing requests to
 * the same app. Nothing listens beyond the loopback interface. Without IPv6 it is skipped.
 */
async function listenOnOtherLoopback(
  app: FastifyInstance,
  host: string,
  consoleHost: string,
  log: FastifyBaseLogger,
): Promise<http.Server | null> {
  if (!LOOPBACK_HOSTS.has(host) || !LOOPBACK_HOSTS.has(consoleHost)) return null;
  const address = app.server.address();
  if (typeof address !== 'object' || address === null) return null;
  const other = address.family === 'IPv6' ? '127.0.0.1' : '::1';
  const twin = http.createServer((request, response) => app.server.emit('request', request, response));
  try {
    await new Promise<void>((resolve, reject) => {
      twin.once('error', reject);
      twin.listen(address.port, other, resolve);
    });
    return twin;
  } catch (error) {
    log.info({ err: error }, `console: not also listening on ${other}`);
    return null;
  }
}
import { createMailer, type Mailer } from './mailer.js';

export interface RunningConsole {
  /** The console's origin as links and the Origin check use it. */
  url: string;
  /** Tells the playground the API's address (for copy-as-curl), once the API listens. */
  setApiUrl(url: string): void;
  app: FastifyInstance;
  mailer: Mailer;
  close(): Promise<void>;
}

export async function startConsole(
  settings: Settings,
  store: AccountsStore,
  envelope: Envelope,
  logger: FastifyBaseLogger,
  trustProxy: false | string[],
  /** Where the e-mail limits are counted (shared by every process of the deployment). */
  sendStore: SharedStore = { kind: 'process' },
): Promise<RunningConsole> {
  const configured = new URL(settings.CONSOLE_URL);
  const log = logger.child({ component: 'console' });
  const mailer = createMailer({
    smtpUrl: settings.SMTP_URL,
    from: settings.MAIL_FROM,
    outbox: settings.CONSOLE_OUTBOX,
    // warn: without SMTP_URL no mail leaves the machine, and the link must reach the log at any level but error.
    log: (message, fields) => log.warn(fields ?? {}, message),
  });
  const plans = new PlanBook(freePlan(settings), store, 5_000);
  const options: ConsoleOptions = {
    store,
    origin: configured.origin,
    mailer,
    envelope,
    planLimits: (name: string) => plans.limitsFor(name),
    watch: { freeLimit: settings.FREE_MAX_WATCH_ENTRIES, guard: guardOfSettings(settings) },
    logger: log,
    trustProxy,
    sendStore,
  };
  const app = buildConsole(options);
  // A console at a loopback address on a loopback host (`make demo`) answers on every loopback name
  // (localhost, 127.0.0.1, [::1]), as the Origin check accepts them (security.ts).
  const host =
    LOOPBACK_HOSTS.has(configured.hostname) && LOOPBACK_HOSTS.has(settings.HOST)
      ? 'localhost'
      : settings.HOST;
  try {
    await app.listen({ port: settings.CONSOLE_PORT, host });
  } catch (error) {
    mailer.close();
    throw new Error(
      `cannot listen for the console on ${settings.HOST}:${settings.CONSOLE_PORT}: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (configured.port === '0') {
    const address = app.server.address();
    configured.port = String(typeof address === 'object' && address ? address.port : 0);
    options.origin = configured.origin;
  }
  const twin = await listenOnOtherLoopback(app, settings.HOST, configured.hostname, log);
  return {
    url: options.origin,
    setApiUrl(url) {
      options.apiUrl = url;
    },
    app,
    mailer,
    close: async () => {
      twin?.close();
      await app.close();
      mailer.close();
    },
  };
}
