/**
 * A hosting run (docs/api.md#get-v1domaindomainhosting) and its compact form in the release file
 * (domain_hosting.runs).
 */
export interface HostingRun {
  public: boolean;
  asn: number | null;
  as_name: string | null;
  provider: string | null;
  category: string | null;
  addresses: number;
  record_types: string[];
  first_observed: number;
  last_confirmed: number;
  ended_at: number | null;
  current: boolean;
}

/**
 * Compact form stored in the release (domain_hosting.runs is a JSON array of these):
 * [public 0|1, asn|null, provider|null, category|null, addresses, record type bits (1 = A, 2 = AAAA),
 *  first_observed, last_confirmed, ended_at|null]. The AS name is joined from the asn table at lookup.
 */
export type EncodedRun = [
  0 | 1,
  number | null,
  string | null,
  string | null,
  number,
  number,
  number,
  number,
  number | null,
];

export function encodeRun(run: HostingRun): EncodedRun {
  const bits = (run.record_types.includes('A') ? 1 : 0) | (run.record_types.includes('AAAA') ? 2 : 0);
  return [
    run.public ? 1 : 0,
    run.asn,
    run.provider,
    run.category,
    run.addresses,
    bits,
    run.first_observed,
    run.last_confirmed,
    run.ended_at,
  ];
}

export function decodeRun(encoded: EncodedRun, asName: string | null): HostingRun {
  const [pub, asn, provider, category, addresses, bits, first, last, ended] = encoded;
  const recordTypes = [...(bits & 1 ? ['A'] : []), ...(bits & 2 ? ['AAAA'] : [])];
  return {
    public: pub === 1,
    asn,
    as_name: asName,
    provider,
    category,
    addresses,
    record_types: recordTypes,
    first_observed: first,
    last_confirmed: last,
    ended_at: ended,
    current: ended === null,
  };
}
