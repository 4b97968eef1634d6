/**
 * GET /v1/domain/{domain}/hosting (docs/api.md#get-v1domaindomainhosting): runs precomputed by the
 * builder.
 */
import { decodeRun, type EncodedRun } from '../hosting-run-codec.js';
import { blocks, isoOrNull, parseDomainParam, requireRelease, statement } from './common.js';
import type { Release } from './release.js';

export interface DomainHostingParams {
  domain: string;
}

export function domainHosting(releaseOrNull: Release | null, params: DomainHostingParams) {
  const domain = parseDomainParam(params.domain);
  const release = requireRelease(releaseOrNull);
  const row = statement(
    release,
    `SELECT h.runs, h.truncated FROM domain d JOIN domain_hosting h ON h.domain_id = d.id WHERE d.name = ?`,
  ).get(domain) as { runs: string; truncated: number } | undefined;
  const asName = statement(release, `SELECT name FROM asn WHERE asn = ?`).pluck();
  const hosting = row
    ? (JSON.parse(row.runs) as EncodedRun[]).map((encoded) => {
        const asn = encoded[1];
        const run = decodeRun(encoded, asn === null ? null : ((asName.get(asn) as string | null) ?? null));
        return {
          ...run,
          first_observed: isoOrNull(run.first_observed)!,
          last_confirmed: isoOrNull(run.last_confirmed)!,
          ended_at: isoOrNull(run.ended_at),
        };
      })
    : [];
  return { domain, hosting, truncated: row ? row.truncated === 1 : false, ...blocks(release) };
}
