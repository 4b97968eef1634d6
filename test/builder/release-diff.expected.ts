/**
 * The changes `builder diff` reports between the two releases of test/builder/release-diff.test.ts
 * (checked by hand against the inputs: the Cloudflare list and mapping edits, observation rounds 3-4).
 */
export const EXPECTED_CHANGES: Array<Record<string, unknown>> = [
  {
    change: 'range_added',
    source: 'cloudflare',
    prefix: '1.1.1.0/24',
    provider: 'Cloudflare',
    category: 'cdn',
  },
  {
    change: 'range_gone',
    source: 'cloudflare',
    prefix: '173.245.48.0/20',
    provider: 'Cloudflare',
    category: 'cdn',
  },
  { change: 'route_asn_changed', route: '185.220.101.0/24', old_asn: 60729, new_asn: 208294 },
  { change: 'route_asn_changed', route: '185.220.102.0/24', old_asn: 60729, new_asn: 208294 },
  {
    change: 'domain_moved',
    domain: 'art.example',
    old_networks: [{ asn: 396982, provider: 'Google Cloud' }],
    networks: [{ asn: 13335, provider: 'Cloudflare' }],
  },
  {
    change: 'domain_moved',
    domain: 'news.example',
    old_networks: [
      { asn: 133119, provider: 'AWS' },
      { asn: 16509, provider: 'AWS' },
    ],
    networks: [{ asn: 54113, provider: 'Fastly' }],
  },
  {
    change: 'domain_ended',
    domain: 'old-shop.example',
    old_networks: [{ asn: 14061, provider: 'DigitalOcean' }],
  },
  { change: 'domain_started', domain: 'radio.example', networks: [{ asn: 14061, provider: 'DigitalOcean' }] },
  {
    change: 'domain_moved',
    domain: 'resolver.example',
    old_networks: [
      { asn: 13335, provider: 'Cloudflare' },
      { asn: 13335, provider: null },
    ],
    networks: [{ asn: 13335, provider: 'Cloudflare' }],
  },
  {
    change: 'domain_moved',
    domain: 'shop.example',
    old_networks: [{ asn: 63949, provider: 'Linode' }],
    networks: [{ asn: 13335, provider: 'Cloudflare' }],
  },
  {
    change: 'domain_moved',
    domain: 'tor-exit.example',
    old_networks: [{ asn: 60729, provider: null }],
    networks: [{ asn: 208294, provider: null }],
  },
  {
    change: 'domain_moved',
    domain: 'www.art.example',
    old_networks: [{ asn: 396982, provider: 'Google Cloud' }],
    networks: [{ asn: 13335, provider: 'Cloudflare' }],
  },
  {
    change: 'domain_moved',
    domain: 'www.news.example',
    old_networks: [
      { asn: 133119, provider: 'AWS' },
      { asn: 16509, provider: 'AWS' },
    ],
    networks: [{ asn: 54113, provider: 'Fastly' }],
  },
  {
    change: 'domain_ended',
    domain: 'www.old-shop.example',
    old_networks: [{ asn: 14061, provider: 'DigitalOcean' }],
  },
  {
    change: 'domain_started',
    domain: 'www.radio.example',
    networks: [{ asn: 14061, provider: 'DigitalOcean' }],
  },
  {
    change: 'domain_moved',
    domain: 'www.resolver.example',
    old_networks: [
      { asn: 13335, provider: 'Cloudflare' },
      { asn: 13335, provider: null },
    ],
    networks: [{ asn: 13335, provider: 'Cloudflare' }],
  },
  {
    change: 'domain_moved',
    domain: 'www.shop.example',
    old_networks: [{ asn: 63949, provider: 'Linode' }],
    networks: [{ asn: 13335, provider: 'Cloudflare' }],
  },
  {
    change: 'ip_gained_domains',
    ip: '104.21.48.7',
    current_count: 2,
    sample: ['shop.example', 'www.shop.example'],
  },
  {
    change: 'ip_lost_domains',
    ip: '120.52.22.100',
    old_count: 2,
    old_sample: ['news.example', 'www.news.example'],
  },
  {
    change: 'ip_lost_domains',
    ip: '151.101.129.195',
    old_count: 2,
    old_sample: ['video.example', 'www.video.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '151.101.193.195',
    current_count: 2,
    sample: ['video.example', 'www.video.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '151.101.65.195',
    current_count: 2,
    sample: ['news.example', 'www.news.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '172.67.182.31',
    current_count: 2,
    sample: ['shop.example', 'www.shop.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '24.144.100.14',
    current_count: 2,
    sample: ['radio.example', 'www.radio.example'],
  },
  {
    change: 'ip_lost_domains',
    ip: '2600:3c00::f03c:94ff:fe12:3456',
    old_count: 2,
    old_sample: ['shop.example', 'www.shop.example'],
  },
  {
    change: 'ip_lost_domains',
    ip: '2600:9000:3002:5c00:1f:e2b0:8dc0:93a1',
    old_count: 2,
    old_sample: ['news.example', 'www.news.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '2606:4700:3030::6815:3007',
    current_count: 2,
    sample: ['shop.example', 'www.shop.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '2606:4700:3034::ac43:b61f',
    current_count: 2,
    sample: ['shop.example', 'www.shop.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '2a04:4e42::323',
    current_count: 2,
    sample: ['news.example', 'www.news.example'],
  },
  {
    change: 'ip_gained_domains',
    ip: '34.35.12.8',
    current_count: 2,
    sample: ['maps.example', 'www.maps.example'],
  },
];
