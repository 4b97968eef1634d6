/**
 * The one query layer (docs/api.md#operations, docs/decisions/0008-query-layer.md): pure functions
 * (release, params) -> response object. REST routes, MCP tools and `builder query` are thin
 * adapters over these. Invalid input throws ApiError (invalid_ip, non_public_ip, invalid_domain,
 * invalid_asn, invalid_cursor, cursor_expired, as_of_out_of_range); the as-of queries (as-of/) answer
 * as of a past moment from the release's history (docs/decisions/0033-as-of.md); `limit` arrives already validated (1..1000) and
 * already lowered for the caller's plan.
 */
export { openRelease, ReleaseOpenError, type Release } from './release.js';
export { lookupIp, type LookupIpParams } from './lookup-ip.js';
export { lookupIpHead, lookupIpHeadReady } from './lookup-ip-head.js';
export { ipDomains, type IpDomainsParams } from './ip-domains.js';
export { domainHistory, type DomainHistoryParams } from './domain-history.js';
export { domainHosting, type DomainHostingParams } from './domain-hosting.js';
export { lookupAsn, type LookupAsnParams } from './lookup-asn.js';
export { lookupIpAsOf } from './as-of/lookup-ip.js';
export { ipDomainsAsOf } from './as-of/ip-domains.js';
export { domainHistoryAsOf } from './as-of/domain-history.js';
export { domainHostingAsOf } from './as-of/domain-hosting.js';
export { lookupAsnAsOf } from './as-of/lookup-asn.js';
export { resolveAsOf, EPOCHS, type AsOf, type Epoch } from './as-of/common.js';
export { DEFAULT_LIMIT, MAX_LIMIT, MAX_CURSOR_LENGTH } from './paging.js';
export { warmLookupIp, ipNetwork, type IpNetwork } from './lookup-ip.js';
export { requireRelease } from './common.js';
export { fenceOf, timeFence, type TimeFence } from './time-fence.js';
export { rdataIpLookup, rrsetLookup, type DnsdbAnswer, type DnsdbRecord } from './dnsdb.js';
