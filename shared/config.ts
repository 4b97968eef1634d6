/**
 * Every setting in one table: name (environment variable), zod type with default, description.
 * CLI flags override the environment; the README's settings table is generated from this and a
 * test keeps them in sync.
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
      'IP-to-ASN mapping sources in order of preference; per address family the first with rows is used.',
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
  FETCH_MAX_SHRINK: {
    schema: z.coerce.number().min(0).max(1).default(0.5),
    description:
      'A fetched feed with this fraction fewer records than its previous snapshot is refused; the previous one is kept.',
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
    const raw = overrides[name as SettingName] ?? env[name];
    const parsed = setting.schema.safeParse(raw === '' ? undefined : raw);
    if (!parsed.success) {
      throw new Error(
        `setting ${name}=${JSON.stringify(raw)}: ${parsed.error.issues.map((i) => i.message).join('; ')}`,
      );
    }
    out[name] = parsed.data;
  }
  return out as Settings;
}
