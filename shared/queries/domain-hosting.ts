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
  return hostingAnswer(
    domain,
    row ?? null,
    (asn) => (asName.get(asn) as string | null) ?? null,
    blocks(release),
  );
}

/** The body of GET /v1/domain/{d}/hosting from its domain_hosting row and the AS names of a release. */
export function hostingAnswer<B extends object>(
  domain: string,
  row: { runs: string; truncated: number } | null,
  asName: (asn: number) => string | null,
  answerBlocks: B,
) {
  const hosting = row
    ? (JSON.parse(row.runs) as EncodedRun[]).map((encoded) => {
        const asn = encoded[1];
        const run = decodeRun(encoded, asn === null ? null : asName(asn));
        return {
          ...run,
          first_observed: isoOrNull(run.first_observed)!,
          last_confirmed: isoOrNull(run.last_confirmed)!,
          ended_at: isoOrNull(run.ended_at),
        };
      })
    : [];
  return { domain, hosting, truncated: row ? row.truncated === 1 : false, ...answerBlocks };
}
