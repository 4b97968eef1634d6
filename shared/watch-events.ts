/**
 * The kinds of watch events (docs/decisions/0034): the `type` of a webhook and of a change-feed
 * item, an endpoint's kinds filter and the change feed's `kind` argument.
 */
export const EVENT_KINDS = [
  'domain.dns_changed',
  'domain.network_changed',
  'ip.domain_added',
  'ip.domain_removed',
  'ip.range_entered',
  'ip.range_left',
  'asn.domain_added',
  'asn.domain_removed',
  'asn.route_added',
  'asn.route_removed',
] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

/** An event id: `evt_` and 26 base32 characters. */
export const EVENT_ID_RE = /^evt_[a-z2-7]{26}$/;
