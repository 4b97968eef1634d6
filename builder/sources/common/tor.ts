/** What both Tor exit lists produce. */
export const TOR_PROVIDER = 'Tor Project';
export const TOR_EXIT_METADATA: Readonly<Record<string, string>> = { kind: 'exit_observed' };

/**
 * The share of a Tor exit list that may leave between two daily snapshots: relays come and go,
 * and each address is a row of its own, so the 1 % of FEED_MAX_ADDRESS_DROP would refuse ordinary
 * days; a truncated download (half the list or less) is still refused (docs/decisions/0029).
 */
export const TOR_EXIT_CHURN = 0.3;
