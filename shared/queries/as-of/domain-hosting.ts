/**
 * GET /v1/domain/{domain}/hosting?as_of=T (docs/api.md#as-of-a-past-moment): the runs as the
 * epoch that answered at T held them, their AS names as of then. The newest epoch is the release
 * itself: the current query answers, with the as-of blocks.
 */
import { decodeRuns } from '../../as-of-symbols.js';
import { nowEpoch } from '../../time.js';
import { parseDomainParam } from '../common.js';
import { domainHosting, hostingAnswer, type DomainHostingParams } from '../domain-hosting.js';
import type { Release } from '../release.js';
import { resolveAsOf, withBlocks, type Epoch } from './common.js';
import { versionAt } from './rows.js';

export function domainHostingAsOf(
  releaseOrNull: Release | null,
  params: DomainHostingParams,
  asOf: string | number,
  now = nowEpoch(),
) {
  const domain = parseDomainParam(params.domain);
  const resolved = resolveAsOf(releaseOrNull, asOf, now);
  const release = releaseOrNull!;
  if (resolved.newest) return withBlocks(domainHosting(release, params), resolved);
  const epoch = resolved.epoch;
  const row = versionAt<[runs: string, truncated: number]>(
    release,
    'domain_hosting_hist',
    'name',
    'runs, truncated',
    domain,
    epoch,
  );
  return hostingAnswer(
    domain,
    row ? { runs: decodeRuns(row[0], epoch), truncated: row[1] } : null,
    (asn) => asNameAt(release, epoch, asn),
    resolved.blocks,
  );
}

/** The AS name of `asn` as `epoch` held it. */
function asNameAt(release: Release, epoch: Epoch, asn: number): string | null {
  const row = versionAt<[name: string | null]>(release, 'asn_hist', 'asn', 'name', asn, epoch);
  return row ? row[0] : null;
}
