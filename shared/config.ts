/**
 * Every setting in one table: name (environment variable), zod type with default, description.
 * CLI flags override the environment; the settings table of docs/settings.md is generated from this
 * and a test keeps them in sync.
 */
import { z } from 'zod';

export const SETTINGS = {
  STATE_DIR: {
    schema: z.string().min(1).default('state'),
    description: 'Directory of the builder state (state.sqlite, feed snapshots).',
  },
  RELEASES_DIR: {
    schema: z.string().min(1).default('releases'),
    description: 'Directory of the release files and the CURRENT pointer.',
  },
  ASN_MAPPING: {
    schema: z.string().min(1).default('iptoasn,ip-location-db'),
    description:
      'IP-to-ASN mapping sources in order of preference, layered per address: the first with a row holding an address answers (its most specific row), the next fill the gaps.',
  },
  FETCH_TIMEOUT_MS: {
    schema: z.coerce.number().int().positive().default(30_000),
    description: 'Timeout of one feed download attempt (headers and body), in milliseconds.',
  },
  FETCH_RETRIES: {
    schema: z.coerce.number().int().min(0).max(10).default(3),
    description:
      'Retries of a failed feed download (network error, timeout, 429, 5xx), with exponential backoff.',
  },
  FEED_MAX_ROW_DROP: {
    schema: z.coerce.number().min(0).max(1).default(0.2),
    description:
      'A feed snapshot (builder fetch, import, run) with more than this share fewer rows than the previous one is refused and the previous one kept, unless accepted with --accept-drop; formerly FETCH_MAX_SHRINK, still read.',
    formerly: 'FETCH_MAX_SHRINK',
  },
  FEED_MAX_ADDRESS_DROP: {
    schema: z.coerce.number().min(0).max(1).default(0.01),
    description:
      'A feed snapshot covering more than this share fewer IPv4 or IPv6 addresses than the previous one (ranges; routed rows of a mapping) is refused and the previous one kept, unless accepted with --accept-drop.',
  },
  RELEASE_MAX_ROUTED_DROP: {
    schema: z.coerce.number().min(0).max(1).default(0.05),
    description:
      'A release whose IP-to-ASN mapping covers more than this share less routed IPv4 or IPv6 space than the current release is not published, unless forced (builder release --force).',
  },
  RELEASE_MAX_ANSWER_DROP: {
    schema: z.coerce.number().min(0).max(1).default(0.1),
    description:
      'A release with more than this share fewer current DNS answers (name, address) than the current release is not published, unless forced (builder release --force).',
  },
  RELEASE_HISTORY_DAYS: {
    schema: z.coerce.number().int().min(0).default(0),
    description:
      'Days of past releases each release keeps for as_of (docs/decisions/0033-as-of.md): older epochs, and the versions only they held, are dropped at release time; the release current at the cutoff is kept (0: keep every release).',
  },
  FEED_MIRROR: {
    schema: z.string().default(''),
    description:
      'Base URL of a mirror: a feed URL https://host/path is fetched as <mirror>/host/path instead (empty: the publishers).',
  },
  OWN_CATEGORY_THRESHOLD: {
    schema: z.coerce.number().min(0).max(1).default(0.5),
    description:
      "Share of an AS's routed IPv4 space that published cloud/hosting/CDN ranges must cover for the service's own category.",
  },
  RESOLVER: {
    schema: z.string().default(''),
    description:
      'DNS resolver the collector asks, host:port or [IPv6]:port (empty: the first nameserver of /etc/resolv.conf).',
  },
  DNS_TIMEOUT_MS: {
    schema: z.coerce.number().int().min(10).max(60_000).default(2000),
    description: 'Time the collector waits for one DNS answer before asking again, in milliseconds.',
  },
  DNS_RETRIES: {
    schema: z.coerce.number().int().min(0).max(10).default(2),
    description: 'Times the collector asks again after a timeout before recording the outcome timeout.',
  },
  DNS_MAX_QPS: {
    schema: z.coerce.number().int().min(0).default(2000),
    description:
      'DNS queries per second the collector sends at most (0: no cap; only for a resolver of your own).',
  },
  DNS_MAX_IN_FLIGHT: {
    schema: z.coerce.number().int().min(1).max(4096).default(100),
    description: 'DNS queries the collector has sent and not yet had answered, at most.',
  },
  PTR_SHARE: {
    schema: z.coerce.number().min(0).max(1).default(0.1),
    description:
      'Share of the observed IPs whose PTR each collect round checks, least recently checked first (0: none).',
  },
  PORT: {
    schema: z.coerce.number().int().min(0).max(65535).default(8080),
    description: 'TCP port the server listens on (0: any free port).',
  },
  HOST: {
    schema: z.string().min(1).default('127.0.0.1'),
    description: 'Address the server listens on (0.0.0.0 or :: for every interface).',
  },
  ACCOUNTS_DB: {
    schema: z.string().min(1).default('accounts.sqlite'),
    description:
      'Embedded accounts store (workspaces, projects, keys): an SQLite file, created when missing.',
  },
  DATABASE_URL: {
    schema: z.string().default(''),
    description:
      'PostgreSQL accounts store shared by every replica (postgres://user@host:5432/db); empty: the embedded ACCOUNTS_DB.',
  },
  DATABASE_SCHEMA: {
    schema: z
      .string()
      .regex(/^([a-z_][a-z0-9_]{0,62})?$/, 'expected lowercase letters, digits and _')
      .default(''),
    description:
      "PostgreSQL schema of the accounts tables, created when missing (empty: the connection's default).",
  },
  REDIS_URL: {
    schema: z.string().default(''),
    description:
      'Redis for rate limits and counters shared by every replica (redis://host:6379); empty: in-process counters.',
  },
  REDIS_KEY_PREFIX: {
    schema: z.string().default('ipscope:'),
    description: 'Prefix of every Redis key the server writes, so several installations can share one Redis.',
  },
  TRUST_PROXY: {
    schema: z.string().default(''),
    description:
      'Proxies whose X-Forwarded-For is believed, comma-separated addresses, CIDRs or loopback/linklocal/uniquelocal (empty: the socket address is the client).',
  },
  HEADERS_TIMEOUT_MS: {
    schema: z.coerce.number().int().min(100).max(600_000).default(10_000),
    description:
      'Time a client has to send the request line and headers, in milliseconds; later: 408 and the connection is closed (at most REQUEST_TIMEOUT_MS).',
  },
  REQUEST_TIMEOUT_MS: {
    schema: z.coerce.number().int().min(100).max(600_000).default(30_000),
    description:
      'Time a client has to send a whole request, headers and body, in milliseconds (a trickling or never-ending body included); later: 408 and the connection is closed.',
  },
  METERING: {
    schema: z.enum(['on', 'off']).default('on'),
    description:
      'off serves every key without rate limits, quotas or counting (benchmarks, or a gateway that meters).',
  },
  FREE_REQUESTS_PER_MINUTE: {
    schema: z.coerce.number().int().min(1).default(60),
    description:
      "Free plan: requests per minute per workspace (across all its keys). Other plans: 'server plans set'.",
  },
  FREE_MONTHLY_QUOTA: {
    schema: z.coerce.number().int().min(0).default(10_000),
    description: 'Free plan: counted requests per workspace per UTC calendar month.',
  },
  FREE_MAX_PAGE_SIZE: {
    schema: z.coerce.number().int().min(1).max(1000).default(100),
    description:
      'Free plan: largest page (limit) of a paged lookup; larger values are lowered and next_cursor continues.',
  },
  FREE_MAX_WATCH_ENTRIES: {
    schema: z.coerce.number().int().min(0).default(100),
    description:
      "Free plan (and plans without a limit of their own): watch entries per project. Other plans: 'server plans watch-limit'.",
  },
  WEBHOOK_ALLOW_HTTP: {
    schema: z.enum(['true', 'false']).default('false'),
    description: 'true: webhook URLs may be plain http (local receivers); otherwise https only.',
  },
  WEBHOOK_ALLOWED_ADDRESSES: {
    schema: z.string().default(''),
    description:
      'Non-public addresses or CIDR prefixes webhooks may go to all the same (comma separated, for local receivers); empty: public addresses only.',
  },
  WEBHOOK_DELIVERY: {
    schema: z.enum(['on', 'off']).default('on'),
    description:
      'off: this process sends no webhooks (the events of new releases are still computed for the change feed, and wait in the outbox for a process that delivers).',
  },
  WEBHOOK_POLL_MS: {
    schema: z.coerce.number().int().min(50).max(60_000).default(1_000),
    description:
      'How often a server process looks for a new release to compute watch events of and for webhook deliveries that are due, in milliseconds.',
  },
  WEBHOOK_RETRY_SCHEDULE_MS: {
    schema: z
      .string()
      .regex(/^\d+(,\d+)*$/, 'expected milliseconds, comma separated')
      .default('5000,300000,1800000,7200000,18000000,36000000,36000000')
      .transform((list) => list.split(',').map(Number)),
    description:
      "Waits after a webhook delivery's failed attempts, in milliseconds, comma separated: one more attempt per wait, then the delivery is failed (default: Standard Webhooks' schedule, eight attempts over about 27.6 h).",
  },
  WEBHOOK_LEASE_MS: {
    schema: z.coerce.number().int().min(1_000).max(3_600_000).default(60_000),
    description:
      'How long a server process holds a webhook delivery it claimed, in milliseconds: a process that dies meanwhile leaves it to the others after this. Under 60000 the connect and reply timeouts of an attempt (5 s, 10 s) shrink to a quarter and a half of it, so that an attempt always ends inside its lease.',
  },
  WATCH_RUN_LEASE_MS: {
    schema: z.coerce.number().int().min(1_000).max(3_600_000).default(120_000),
    description:
      "How long a server process holds the computation of a release's watch events, in milliseconds, without renewing it (the computing process renews it every third of it): a process that dies meanwhile leaves it to the others after this.",
  },
  USAGE_FLUSH_MS: {
    schema: z.coerce.number().int().min(10).max(10_000).default(200),
    description:
      'How often counted requests are written to the accounts store, in milliseconds (and at shutdown).',
  },
  KEY_CACHE_MS: {
    schema: z.coerce.number().int().min(0).max(1000).default(500),
    description:
      'How long a verified key is trusted without asking the accounts store (at most 1000: revocation reaches every replica within 1 s).',
  },
  CONSOLE_URL: {
    schema: z.string().default(''),
    description:
      'Origin of the web console (e.g. https://console.example.org), which this server serves on CONSOLE_PORT; the only web origin allowed to call the API and MCP (empty: no console).',
  },
  CONSOLE_PORT: {
    schema: z.coerce.number().int().min(0).max(65535).default(8081),
    description:
      'TCP port the web console listens on, on HOST, when CONSOLE_URL is set (0: any free port); CONSOLE_URL is its public origin.',
  },
  SMTP_URL: {
    schema: z.string().default(''),
    description:
      'SMTP server the console sends sign-in links and codes through (smtp://user:pass@host:587, smtps://…); empty: written to CONSOLE_OUTBOX and logged.',
  },
  MAIL_FROM: {
    schema: z.string().min(3).default('ipscope console <console@ipscope.invalid>'),
    description: "Sender of the console's e-mails.",
  },
  CONSOLE_OUTBOX: {
    schema: z.string().min(1).default('var/outbox'),
    description:
      'Without SMTP_URL: directory the console writes its e-mails to (one .eml file each); the sign-in link is also logged.',
  },
  LOG_LEVEL: {
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    description: 'Server log level (structured JSON logs on stdout, pino).',
  },
  WORKERS: {
    schema: z.coerce.number().int().min(0).max(256).default(0),
    description:
      'Server processes sharing the port (node:cluster): 0 is one per core available (os.availableParallelism()); 1 is a single process. Counters stay exact across them (docs/decisions/0019).',
  },
  METRICS_PORT: {
    schema: z
      .string()
      .regex(/^(\d{1,5})?$/, 'expected a port number, or empty for off')
      .refine((v) => v === '' || Number(v) <= 65535, 'expected a port from 0 to 65535')
      .default(''),
    description:
      'Port of the Prometheus endpoint GET /metrics, on HOST (empty: off; 0: any free port). For operators: keep it off the public network.',
  },
  RELEASE_POLL_MS: {
    schema: z.coerce.number().int().min(50).max(60_000).default(500),
    description: 'How often the server checks releases/CURRENT for a new release, in milliseconds.',
  },
} as const;

export type SettingName = keyof typeof SETTINGS;
export type Settings = { [K in SettingName]: z.output<(typeof SETTINGS)[K]['schema']> };

/** Reads settings from the environment (and overrides), failing with the setting's name and the problem. */
export function loadSettings(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Record<SettingName, unknown>> = {},
): Settings {
  const out: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(SETTINGS)) {
    // A renamed setting is still read under its former name (the new name wins).
    const formerly = 'formerly' in setting ? setting.formerly : undefined;
    const fromFormer = overrides[name as SettingName] === undefined && env[name] === undefined && formerly;
    const raw = fromFormer ? env[formerly] : (overrides[name as SettingName] ?? env[name]);
    const parsed = setting.schema.safeParse(raw === '' ? undefined : raw);
    if (!parsed.success) {
      const label = fromFormer ? `${formerly} (now ${name})` : name;
      throw new Error(
        `setting ${label}=${JSON.stringify(raw)}: ${parsed.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    out[name] = parsed.data;
  }
  return out as Settings;
}
