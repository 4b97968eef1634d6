/**
 * Every address the demo answers with, each with the provider lists it must lie in (checked
 * against the feed excerpts by feed-check.ts when the files are written).
 */

export type ListKey =
  | 'cloudflare'
  | 'fastly'
  | 'aws-cloudfront'
  | 'aws-ec2'
  | 'google-cloud'
  | 'linode'
  | 'digitalocean'
  | 'tor-exit'
  | 'apple-relay';

export interface DemoAddress {
  address: string;
  /** The lists that must contain the address; empty for an address in no list. */
  lists: ListKey[];
}

const ip = (address: string, ...lists: ListKey[]): DemoAddress => ({ address, lists });

/** Every address used by the demo, by role. */
export const DEMO_ADDRESSES = {
  // Cloudflare (104.16.0.0/13, 104.24.0.0/14, 172.64.0.0/13, 2606:4700::/32)
  cloudflareShared: ip('104.16.132.229', 'cloudflare'),
  cloudflareSharedV6: ip('2606:4700::6810:84e5', 'cloudflare'),
  cloudflareCdnDemo: ip('104.16.133.229', 'cloudflare'),
  cloudflareCdnDemoV6: ip('2606:4700::6810:85e5', 'cloudflare'),
  cloudflareShopA: ip('104.21.48.7', 'cloudflare'),
  cloudflareShopB: ip('172.67.182.31', 'cloudflare'),
  cloudflareShopV6A: ip('2606:4700:3030::6815:3007', 'cloudflare'),
  cloudflareShopV6B: ip('2606:4700:3034::ac43:b61f', 'cloudflare'),
  cloudflareResolverV6: ip('2606:4700:4700::1111', 'cloudflare'),
  // Apple iCloud Private Relay egress (a /32 of the relay list; in no hosting provider list)
  appleRelay: ip('104.28.28.1', 'apple-relay'),
  // Fastly (151.101.0.0/16, 2a04:4e42::/32)
  fastlyNewsA: ip('151.101.1.195', 'fastly'),
  fastlyNewsB: ip('151.101.65.195', 'fastly'),
  fastlyNewsV6: ip('2a04:4e42::323', 'fastly'),
  fastlyVideoOld: ip('151.101.129.195', 'fastly'),
  fastlyVideoNew: ip('151.101.193.195', 'fastly'),
  fastlyVideoV6: ip('2a04:4e42:200::323', 'fastly'),
  // AWS CloudFront (23.228.249.0/24, 120.52.22.96/27, 2600:9000:3000::/36) and EC2
  // (15.181.232.0/21, 216.244.7.0/24, 2406:daba:f000::/40)
  cloudfrontA: ip('23.228.249.10', 'aws-cloudfront'),
  cloudfrontB: ip('23.228.249.76', 'aws-cloudfront'),
  cloudfrontV6: ip('2600:9000:3001:a400:9:6f0a:3c00:93a1', 'aws-cloudfront'),
  cloudfrontNews: ip('120.52.22.100', 'aws-cloudfront'),
  cloudfrontNewsV6: ip('2600:9000:3002:5c00:1f:e2b0:8dc0:93a1', 'aws-cloudfront'),
  ec2Status: ip('15.181.232.17', 'aws-ec2'),
  ec2StatusV6: ip('2406:daba:f012:3400:5c1e:7d2a:9b1:4f0e', 'aws-ec2'),
  ec2ApiA: ip('216.244.7.45', 'aws-ec2'),
  ec2ApiB: ip('15.181.232.18', 'aws-ec2'),
  ec2Health: ip('216.244.7.46', 'aws-ec2'),
  // Google Cloud (34.35.0.0/16 africa-south1, 8.228.64.0/18 us-east4, 2600:1900:4280::/44)
  gcpAfrica: ip('34.35.12.7', 'google-cloud'),
  gcpAfricaMaps: ip('34.35.12.8', 'google-cloud'),
  gcpAfricaMusic: ip('34.35.12.9', 'google-cloud'),
  gcpUsEast: ip('8.228.70.15', 'google-cloud'),
  gcpV6: ip('2600:1900:4280::1a', 'google-cloud'),
  // Linode (72.14.176.0/24 … 72.14.182.0/24, 172.239.29.0/24 … 172.239.31.0/24, 2600:3c00::/32)
  linodeShop: ip('72.14.177.42', 'linode'),
  linodeShopV6: ip('2600:3c00::f03c:94ff:fe12:3456', 'linode'),
  linodeWeather: ip('72.14.178.9', 'linode'),
  linodeGames: ip('172.239.30.25', 'linode'),
  linodeBooksV6: ip('2600:3c00::f03c:94ff:fe12:4567', 'linode'),
  // DigitalOcean (5.101.96.0/21, 24.144.96.0/19, 2a03:b0c0:3:e0::/64)
  doOrg: ip('5.101.98.20', 'digitalocean'),
  doOrgV6: ip('2a03:b0c0:3:e0::1a:f001', 'digitalocean'),
  doOldShop: ip('24.144.100.12', 'digitalocean'),
  doGames: ip('24.144.100.13', 'digitalocean'),
  doRadio: ip('24.144.100.14', 'digitalocean'),
  doPhotos: ip('24.144.100.15', 'digitalocean'),
  // Tor exit (from the Tor bulk exit list)
  torExit: ip('185.220.101.18', 'tor-exit'),
  // In no provider list (Cloudflare's public resolver address is not in Cloudflare's published ranges)
  unlistedResolver: ip('1.1.1.1'),
  // Private (RFC 1918): recorded as answered, has no IP lookup
  privateIntranet: ip('10.20.30.40'),
} satisfies Record<string, DemoAddress>;
