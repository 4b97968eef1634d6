/**
 * The one query layer (docs/api.md#operations, docs/decisions/0008-query-layer.md): pure functions
 * (release, params) -> response object. REST routes, MCP tools and `builder query` are thin
 * adapters over these. Invalid input throws ApiError (invalid_ip, non_public_ip, invalid_domain,
 * invalid_asn, invalid_cursor, cursor_expired); `limit` arrives already validated (1..1000) and
 * already lowered for the caller's plan.
 */
export { openRelease, ReleaseOpenError, type Release } from './release.js';
export { lookupIp, type LookupIpParams } from './lookup-ip.js';
export { ipDomains, type IpDomainsParams } from './ip-domains.js';
export { domainHistory, type DomainHistoryParams } from './domain-history.js';
export { domainHosting, type DomainHostingParams } from './domain-hosting.js';
export { lookupAsn, type LookupAsnParams } from './lookup-asn.js';
export { DEFAULT_LIMIT, MAX_LIMIT, MAX_CURSOR_LENGTH } from './paging.js';
export { warmLookupIp, ipNetwork, type IpNetwork } from './lookup-ip.js';
export { requireRelease } from './common.js';
export { fenceOf, timeFence, type TimeFence } from './time-fence.js';
export { rdataIpLookup, rrsetLookup, type DnsdbAnswer, type DnsdbRecord } from './dnsdb.js';
