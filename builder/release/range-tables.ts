/**
 * The range tables of a release (provider_range, provider_segment, asn_range, asn_segment, asn),
 * written by the worker thread from the feeds and mappings of the state, and the network of an
 * address under them for the rest of the build.
 */
import type Database from 'better-sqlite3';
import { layerMappings, readMappingRows, writeMapping } from './asn-mapping.js';
import { writeAsnTable } from './asn-table.js';
import type { BuildOptions } from './build-types.js';
import { NetworkResolver } from './network-resolver.js';
import { writeProviderRanges } from './provider-ranges.js';

/** What writeRangeTables gives the rest of the build. */
export interface RangeTables {
  networks: NetworkResolver;
  /** Sources whose rows or values the tables use (feeds, mappings, AS metadata): for attribution. */
  contributors: string[];
}

/** Writes provider_range, provider_segment, asn_range, asn_segment and asn. */
export function writeRangeTables(
  db: Database.Database,
  options: Pick<BuildOptions, 'asnMappingPreference' | 'ownCategoryThreshold' | 'builtAt'>,
  phase: <T>(name: string, fn: () => T) => T,
): RangeTables {
  const ranges = phase('provider ranges', () => writeProviderRanges(db, options.builtAt));
  const mapping = phase('asn mapping', () =>
    layerMappings(readMappingRows(db, options.asnMappingPreference)),
  );
  const asnTable = phase('asn ranges', () => writeMapping(db, mapping));
  const metaSources = phase('asn table', () =>
    writeAsnTable(db, mapping, ranges.hostingRanges, options.ownCategoryThreshold),
  );
  const contributors = new Set([...ranges.sources, ...metaSources]);
  for (const row of mapping.rows) contributors.add(row.source);
  return { networks: new NetworkResolver(db, asnTable, ranges), contributors: [...contributors].sort() };
}
