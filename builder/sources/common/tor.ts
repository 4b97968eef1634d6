/** What both Tor exit lists produce. */
export const TOR_PROVIDER = 'Tor Project';
export const TOR_EXIT_METADATA: Readonly<Record<string, string>> = { kind: 'exit_observed' };
