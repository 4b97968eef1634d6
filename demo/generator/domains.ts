/**
 * The demo's domains, in seed (rank) order, each with the scenario it shows and its answers
 * round by round.
 */
import { DEMO_ADDRESSES as A } from './addresses.js';
import {
  always,
  chained,
  mirrored,
  name,
  NODATA,
  NX_NAME,
  NXDOMAIN,
  pos,
  rounds,
  SERVFAIL,
  TIMEOUT,
  type DomainPlan,
} from './answers.js';

const sharedCloudflare = name(always(pos([A.cloudflareShared])), always(pos([A.cloudflareSharedV6])));

/** Seed order = rank order. */
export const DEMO_DOMAINS: DomainPlan[] = [
  {
    domain: 'example.com',
    scenario: 'Stable on AWS CloudFront (2 IPv4 + 1 IPv6); www has a CNAME chain to a cloudfront.net name',
    apex: name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(pos([A.cloudfrontV6]))),
    www: chained(name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(pos([A.cloudfrontV6]))), [
      'd111111abcdef8.cloudfront.net',
    ]),
  },
  mirrored(
    'example.net',
    'Stable on Google Cloud (africa-south1), no AAAA',
    name(always(pos([A.gcpAfrica])), always(NODATA)),
  ),
  mirrored(
    'example.org',
    'Stable on DigitalOcean with AAAA',
    name(always(pos([A.doOrg])), always(pos([A.doOrgV6]))),
  ),
  mirrored(
    'shop.example',
    'Moves Linode -> Cloudflare between round 2 and round 3 (A and AAAA)',
    name(
      rounds(
        pos([A.linodeShop]),
        pos([A.linodeShop]),
        pos([A.cloudflareShopA, A.cloudflareShopB]),
        pos([A.cloudflareShopA, A.cloudflareShopB]),
      ),
      rounds(
        pos([A.linodeShopV6]),
        pos([A.linodeShopV6]),
        pos([A.cloudflareShopV6A, A.cloudflareShopV6B]),
        pos([A.cloudflareShopV6A, A.cloudflareShopV6B]),
      ),
    ),
  ),
  mirrored(
    'news.example',
    'Fastly in round 1, AWS CloudFront in round 2, back on the same Fastly addresses in rounds 3-4 (return to a network)',
    name(
      rounds(
        pos([A.fastlyNewsA, A.fastlyNewsB]),
        pos([A.cloudfrontNews]),
        pos([A.fastlyNewsA, A.fastlyNewsB]),
        pos([A.fastlyNewsA, A.fastlyNewsB]),
      ),
      rounds(pos([A.fastlyNewsV6]), pos([A.cloudfrontNewsV6]), pos([A.fastlyNewsV6]), pos([A.fastlyNewsV6])),
    ),
  ),
  {
    domain: 'cdn-demo.example',
    scenario: 'Cloudflare; www reaches the same addresses through a one-name CNAME chain',
    apex: name(always(pos([A.cloudflareCdnDemo])), always(pos([A.cloudflareCdnDemoV6]))),
    www: chained(name(always(pos([A.cloudflareCdnDemo])), always(pos([A.cloudflareCdnDemoV6]))), [
      'www.cdn-demo.example.cdn.cloudflare.net',
    ]),
  },
  {
    domain: 'video.example',
    scenario:
      'Fastly; new address in the same network between round 2 and 3 (new interval, same hosting run); ' +
      'www has a two-name CNAME chain and an AAAA record, the apex has no AAAA',
    apex: name(
      rounds(
        pos([A.fastlyVideoOld]),
        pos([A.fastlyVideoOld]),
        pos([A.fastlyVideoNew]),
        pos([A.fastlyVideoNew]),
      ),
      always(NODATA),
    ),
    www: chained(
      name(
        rounds(
          pos([A.fastlyVideoOld]),
          pos([A.fastlyVideoOld]),
          pos([A.fastlyVideoNew]),
          pos([A.fastlyVideoNew]),
        ),
        always(pos([A.fastlyVideoV6])),
      ),
      ['video.example.global.ssl.fastly.net', 'dualstack.n.sni.global.fastly.net'],
    ),
  },
  mirrored(
    'old-shop.example',
    'DigitalOcean in rounds 1-2, then NXDOMAIN in rounds 3-4 (the domain was dropped)',
    name(
      rounds(pos([A.doOldShop]), pos([A.doOldShop]), NXDOMAIN, NXDOMAIN),
      rounds(NODATA, NODATA, NXDOMAIN, NXDOMAIN),
    ),
  ),
  mirrored('gone.example', 'NXDOMAIN in every round: in the seed, never positive', NX_NAME),
  {
    domain: 'status.example',
    scenario:
      'AWS EC2 in rounds 1-3; the last round fails (A timeout, AAAA servfail) so the apex keeps the round-3 answer, ' +
      'stale with transient_failure; www answers normally',
    apex: name(
      rounds(pos([A.ec2Status]), pos([A.ec2Status]), pos([A.ec2Status]), TIMEOUT),
      rounds(pos([A.ec2StatusV6]), pos([A.ec2StatusV6]), pos([A.ec2StatusV6]), SERVFAIL),
    ),
    www: name(always(pos([A.ec2Status])), always(pos([A.ec2StatusV6]))),
  },
  mirrored(
    'api.example',
    'AWS EC2, two addresses whose order flips every round (and TTLs vary): never a change of address',
    name(
      rounds(
        pos([A.ec2ApiA, A.ec2ApiB]),
        pos([A.ec2ApiB, A.ec2ApiA]),
        pos([A.ec2ApiA, A.ec2ApiB]),
        pos([A.ec2ApiB, A.ec2ApiA]),
      ),
      always(NODATA),
    ),
  ),
  mirrored(
    'flaky.example',
    'Every query fails (A servfail, AAAA timeout): no answer ever, stale with never_confirmed',
    name(always(SERVFAIL), always(TIMEOUT)),
  ),
  mirrored(
    'blog.example',
    'Shares one Cloudflare IPv4 and IPv6 address with 5 other domains',
    sharedCloudflare,
  ),
  mirrored('forum.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('wiki.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('docs.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('recipes.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('pets.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  {
    domain: 'tor-exit.example',
    scenario: 'Resolves to an address on the Tor exit list (no provider); www does not exist',
    apex: name(always(pos([A.torExit])), always(NODATA)),
    www: NX_NAME,
  },
  mirrored(
    'relay-demo.example',
    'Resolves to an Apple iCloud Private Relay egress address (usage category relay, no provider)',
    name(always(pos([A.appleRelay])), always(NODATA)),
  ),
  mirrored(
    'maps.example',
    'Google Cloud us-east4 in rounds 1-2, Google Cloud africa-south1 in rounds 3-4 (same provider, new address)',
    name(
      rounds(pos([A.gcpUsEast]), pos([A.gcpUsEast]), pos([A.gcpAfricaMaps]), pos([A.gcpAfricaMaps])),
      always(NODATA),
    ),
  ),
  mirrored(
    'resolver.example',
    "IPv4 1.1.1.1 is in no provider list (but mapped to AS13335); its IPv6 lies in Cloudflare's published range",
    name(always(pos([A.unlistedResolver])), always(pos([A.cloudflareResolverV6]))),
  ),
  {
    domain: 'intranet.example',
    scenario:
      'Answers a private address (10.20.30.40): recorded in history, no IP lookup; www does not exist',
    apex: name(always(pos([A.privateIntranet])), always(NODATA)),
    www: NX_NAME,
  },
  mirrored(
    'games.example',
    'Moves Linode -> DigitalOcean between round 1 and round 2',
    name(rounds(pos([A.linodeGames]), pos([A.doGames]), pos([A.doGames]), pos([A.doGames])), always(NODATA)),
  ),
  mirrored(
    'music.example',
    'Google Cloud; AAAA appears in round 3 (nodata before)',
    name(always(pos([A.gcpAfricaMusic])), rounds(NODATA, NODATA, pos([A.gcpV6]), pos([A.gcpV6]))),
  ),
  mirrored('photos.example', 'Stable on DigitalOcean', name(always(pos([A.doPhotos])), always(NODATA))),
  mirrored(
    'travel.example',
    'Stable on Google Cloud us-east4 (TTL changes only)',
    name(always(pos([A.gcpUsEast])), always(pos([A.gcpV6]))),
  ),
  mirrored(
    'weather.example',
    'Linode; round 2 times out (A and AAAA), rounds 3-4 answer again: one interval, not stale at the end',
    name(
      rounds(pos([A.linodeWeather]), TIMEOUT, pos([A.linodeWeather]), pos([A.linodeWeather])),
      rounds(NODATA, TIMEOUT, NODATA, NODATA),
    ),
  ),
  mirrored(
    'books.example',
    'IPv6 only: A nodata, AAAA on Linode',
    name(always(NODATA), always(pos([A.linodeBooksV6]))),
  ),
  mirrored(
    'radio.example',
    'NXDOMAIN in rounds 1-2, registered and on DigitalOcean in rounds 3-4',
    name(
      rounds(NXDOMAIN, NXDOMAIN, pos([A.doRadio]), pos([A.doRadio])),
      rounds(NXDOMAIN, NXDOMAIN, NODATA, NODATA),
    ),
  ),
  {
    domain: 'tickets.example',
    scenario: 'Shares the AWS CloudFront addresses of example.com; www has a CNAME chain',
    apex: name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(NODATA)),
    www: chained(name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(NODATA)), [
      'd222222abcdef8.cloudfront.net',
    ]),
  },
  mirrored(
    'jobs.example',
    'Shares the DigitalOcean address of old-shop.example, and keeps it after old-shop.example goes NXDOMAIN',
    name(always(pos([A.doOldShop])), always(NODATA)),
  ),
  mirrored('health.example', 'Stable on AWS EC2', name(always(pos([A.ec2Health])), always(NODATA))),
  mirrored(
    'cars.example',
    'Shares the Linode address of shop.example, and stays there after shop.example moves away',
    name(always(pos([A.linodeShop])), always(NODATA)),
  ),
  mirrored(
    'garden.example',
    'Shares one Fastly address with news.example',
    name(always(pos([A.fastlyNewsA])), always(NODATA)),
  ),
  mirrored(
    'art.example',
    'Shares the Cloudflare address of blog.example from round 3 on (Google Cloud before)',
    name(
      rounds(pos([A.gcpUsEast]), pos([A.gcpUsEast]), pos([A.cloudflareShared]), pos([A.cloudflareShared])),
      rounds(NODATA, NODATA, pos([A.cloudflareSharedV6]), pos([A.cloudflareSharedV6])),
    ),
  ),
  mirrored(
    'chat.example',
    'Shares the Google Cloud address of example.net',
    name(always(pos([A.gcpAfrica])), always(NODATA)),
  ),
];
