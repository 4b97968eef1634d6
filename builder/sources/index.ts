/** Every feed the builder knows, by name. */
import { source as appleRelay } from './apple-private-relay.js';
import { source as asCategory } from './as-category.js';
import { source as asRole } from './as-role.js';
import { source as asn2org } from './asn2org.js';
import { source as aws } from './aws.js';
import { source as azure } from './azure.js';
import { source as bingbot } from './bingbot.js';
import { source as cloudflare } from './cloudflare.js';
import { source as digitalocean } from './digitalocean.js';
import { source as fastly } from './fastly.js';
import { source as googleCloud } from './google-cloud.js';
import { source as googleSpecialCrawlers } from './google-special-crawlers.js';
import { source as googleUserTriggeredFetchers } from './google-user-triggered-fetchers.js';
import { source as googlebot } from './googlebot.js';
import { source as hetzner } from './hetzner.js';
import { source as ipLocationDb } from './ip-location-db.js';
import { source as iptoasn } from './iptoasn.js';
import { source as linode } from './linode.js';
import { source as oracle } from './oracle.js';
import { source as ovh } from './ovh.js';
import { source as torBulkExit } from './tor-bulk-exit.js';
import { source as torExitAddresses } from './tor-exit-addresses.js';
import { source as tranco } from './tranco.js';
import type { SourceDefinition } from './types.js';
import { source as x4bnetDatacenter } from './x4bnet-datacenter.js';

export const SOURCES: readonly SourceDefinition[] = [
  // IP-to-ASN mappings
  iptoasn,
  ipLocationDb,
  // Cloud, CDN and hosting ranges
  aws,
  googleCloud,
  azure,
  oracle,
  cloudflare,
  fastly,
  digitalocean,
  linode,
  hetzner,
  ovh,
  // Usage lists
  torExitAddresses,
  torBulkExit,
  appleRelay,
  googlebot,
  googleSpecialCrawlers,
  googleUserTriggeredFetchers,
  bingbot,
  // AS metadata
  asCategory,
  asRole,
  x4bnetDatacenter,
  asn2org,
  // Seed list
  tranco,
];

export const SOURCE_NAMES: readonly string[] = SOURCES.map((source) => source.name);

const BY_NAME = new Map(SOURCES.map((source) => [source.name, source]));

export function getSource(name: string): SourceDefinition | undefined {
  return BY_NAME.get(name);
}
