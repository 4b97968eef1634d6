/** Closed value sets of the API (docs/api.md), shared by the builder, the release file and server. */

export const RANGE_CATEGORIES = ['cloud', 'hosting', 'cdn', 'tor_exit', 'relay', 'crawler'] as const;
export type RangeCategory = (typeof RANGE_CATEGORIES)[number];
/** Categories that describe who hosts an address (they set provider, prefix, is_datacenter, is_cdn). */
export const HOSTING_CATEGORIES: readonly RangeCategory[] = ['cloud', 'hosting', 'cdn'];

/**
 * How long after its last_seen a published range of a category is still served, in seconds
 * (docs/decisions/0014). docs/api.md#get-v1ipip: a `tor_exit` address is one seen as an exit "about
 * the last day"; a release serves it while its date (TorDNSEL's ExitAddress time, else the list's
 * date) is at most two days before the build: the list's day plus one for a daily build. Categories
 * not named here are served as long as their feed's current snapshot lists them.
 */
export const CATEGORY_FRESHNESS_SECONDS: Readonly<Partial<Record<RangeCategory, number>>> = {
  tor_exit: 2 * 86_400,
};

export const AS_CATEGORIES = [
  'isp',
  'hosting',
  'cdn',
  'business',
  'banking',
  'education_research',
  'government_admin',
] as const;
export type AsCategory = (typeof AS_CATEGORIES)[number];

export const NETWORK_ROLES = [
  'tier1_transit',
  'major_transit',
  'midsize_transit',
  'access_provider',
  'content_network',
  'stub',
] as const;
export type NetworkRole = (typeof NETWORK_ROLES)[number];

export const RECORD_TYPES = ['A', 'AAAA'] as const;
export type RecordType = (typeof RECORD_TYPES)[number];

export const OUTCOMES = ['positive', 'nxdomain', 'nodata', 'timeout', 'servfail', 'malformed'] as const;
export type Outcome = (typeof OUTCOMES)[number];
export type OutcomeClass = 'positive' | 'negative' | 'transient';

export function outcomeClass(outcome: Outcome): OutcomeClass {
  if (outcome === 'positive') return 'positive';
  if (outcome === 'nxdomain' || outcome === 'nodata') return 'negative';
  return 'transient';
}
