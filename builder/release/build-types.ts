/**
 * What a release build (build.ts) is given and what it returns; its worker thread
 * (worker-client.ts, release-worker.ts) and the table writers take the same options.
 */

export interface BuildOptions {
  stateFile: string;
  releaseId: string;
  builtAt: number;
  /** Preference order of IP-to-ASN mapping sources: layered per address (asn-mapping.ts). */
  asnMappingPreference: string[];
  /** 'demo' labels the release as demo data in its coverage block. */
  dataset: 'production' | 'demo';
  /** Share of an AS's routed IPv4 space that published cloud/hosting/CDN ranges must cover for our own category. */
  ownCategoryThreshold: number;
  /** RELEASE_HISTORY_DAYS: the epochs the release's history keeps (0: all; builder/release/history.ts). */
  historyDays: number;
  log: (line: string) => void;
}

export interface BuildResult {
  counts: Record<string, number>;
  phases: Array<{ name: string; seconds: number }>;
}
