/**
 * What the watch tests watch and expect of test/helpers/release-sequence.ts's first two releases:
 * the entries (WATCHED), the 24 events of the second release as listed by hand from the inputs
 * (EXPECTED, one line each in the words of `describe`), and the entries as the store takes them.
 */
import { parseWatchSubject } from '../../server/watch/subjects.js';
import type { WatchKind } from '../../accounts/watch-types.js';

export const WATCHED = [
  'art.example',
  'radio.example',
  'shop.example',
  'old-shop.example',
  'quiet.example',
  '1.1.1.1',
  '173.245.48.0/24',
  '104.16.0.0/13',
  '185.220.101.0/24',
  'AS208294',
  'AS60729',
  'AS13335',
];

/** kind, subject, what changed: checked by hand against the inputs of the second release. */
export const EXPECTED = [
  'asn.domain_added 13335 art.example',
  'asn.domain_added 13335 shop.example',
  'asn.domain_added 13335 www.art.example',
  'asn.domain_added 13335 www.shop.example',
  'asn.domain_added 208294 tor-exit.example',
  'asn.domain_removed 60729 tor-exit.example',
  'asn.route_added 208294 185.220.101.0/24',
  'asn.route_added 208294 185.220.102.0/24',
  'asn.route_removed 60729 185.220.101.0/24',
  'asn.route_removed 60729 185.220.102.0/24',
  'domain.dns_changed art.example 8.228.70.15 -> 104.16.132.229,2606:4700::6810:84e5',
  'domain.dns_changed old-shop.example 24.144.100.12 -> ',
  'domain.dns_changed radio.example  -> 24.144.100.14',
  'domain.dns_changed shop.example 2600:3c00::f03c:94ff:fe12:3456,72.14.177.42 -> 104.21.48.7,172.67.182.31,2606:4700:3030::6815:3007,2606:4700:3034::ac43:b61f',
  'domain.network_changed art.example Google Cloud -> Cloudflare',
  'domain.network_changed old-shop.example DigitalOcean -> ',
  'domain.network_changed radio.example  -> DigitalOcean',
  'domain.network_changed shop.example Linode -> Cloudflare',
  'ip.domain_added 104.16.0.0/13 art.example 104.16.132.229',
  'ip.domain_added 104.16.0.0/13 shop.example 104.21.48.7',
  'ip.domain_added 104.16.0.0/13 www.art.example 104.16.132.229',
  'ip.domain_added 104.16.0.0/13 www.shop.example 104.21.48.7',
  'ip.range_entered 1.1.1.1 cloudflare 1.1.1.0/24 cdn',
  'ip.range_left 173.245.48.0/24 cloudflare 173.245.48.0/20 cdn',
];

type Data = Record<string, unknown> & { subject: { value: string } };
const providers = (list: unknown) => (list as Array<{ provider: string }>).map((n) => n.provider).join(',');

/** One line per event, in the words of EXPECTED. */
export function describe(type: string, data: Data): string {
  const head = `${type} ${data.subject.value}`;
  const range = data.range as { source: string; prefix: string; category: string } | undefined;
  const dns = (side: unknown) => (side as { addresses: string[] }).addresses.join(',');
  if (type.startsWith('asn.route')) return `${head} ${data.route as string}`;
  if (type.startsWith('asn.domain')) return `${head} ${data.domain as string}`;
  if (type === 'domain.dns_changed') return `${head} ${dns(data.old)} -> ${dns(data.new)}`;
  if (type === 'domain.network_changed')
    return `${head} ${providers(data.old_networks)} -> ${providers(data.networks)}`;
  if (type.startsWith('ip.domain')) return `${head} ${data.domain as string} ${data.address as string}`;
  return `${head} ${range!.source} ${range!.prefix} ${range!.category}`;
}

/** An event's line in the words of EXPECTED, from a delivery's body. */
export function describeDelivery(body: string): string {
  const { type, data } = JSON.parse(body) as { type: string; data: Data };
  return describe(type, data);
}

/** WATCHED as entries of the store. */
export function watchedEntries(): Array<{ kind: WatchKind; subject: string }> {
  return WATCHED.map((text) => {
    const parsed = parseWatchSubject(text);
    if (!parsed.ok) throw new Error(parsed.reason);
    return { kind: parsed.kind, subject: parsed.subject };
  });
}
