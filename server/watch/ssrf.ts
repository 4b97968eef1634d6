/**
 * Where a webhook may go (docs/decisions/0034, "Safe by default"): an https URL (http only when
 * allowed) without credentials, whose host has only public addresses by the project's bogon table
 * (shared/bogons.ts), IPv4-mapped and NAT64 forms judged by the IPv4 address inside. The check is
 * also the resolver of the connection itself (`guardedLookup`, undici's `connect.lookup`), so the
 * address connected to is one that was checked: a name that resolves differently the second time
 * (DNS rebinding) gains nothing.
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { findIpBogon } from '../../shared/bogons.js';
import type { Settings } from '../../shared/config.js';
import { parseCidr, parseIp, unmapIpv4, type Cidr, type Ip } from '../../shared/ip.js';

export interface GuardOptions {
  /** Plain http allowed (WEBHOOK_ALLOW_HTTP): local receivers only. */
  allowHttp: boolean;
  /** Non-public blocks let through all the same (WEBHOOK_ALLOWED_ADDRESSES). */
  allowed: readonly Cidr[];
  /** Seam for tests: every address of a name (default: the system resolver, dns.lookup all). */
  resolve?: (host: string) => Promise<LookupAddress[]>;
}

export class WebhookUrlError extends Error {
  override readonly name = 'WebhookUrlError';
}

export function parseAllowedAddresses(text: string): Cidr[] {
  return text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((item) => {
      const cidr = parseCidr(item.includes('/') ? item : `${item}/${item.includes(':') ? 128 : 32}`);
      if (!cidr)
        throw new WebhookUrlError(`WEBHOOK_ALLOWED_ADDRESSES: "${item}" is not an address or CIDR prefix`);
      return cidr;
    });
}

/**
 * The guard as the settings say (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOWED_ADDRESSES): the one the
 * server's deliveries, the admin CLI and the console's endpoint form all check with. A malformed
 * address list throws.
 */
export function guardOfSettings(
  settings: Pick<Settings, 'WEBHOOK_ALLOW_HTTP' | 'WEBHOOK_ALLOWED_ADDRESSES'>,
): GuardOptions {
  return {
    allowHttp: settings.WEBHOOK_ALLOW_HTTP === 'true',
    allowed: parseAllowedAddresses(settings.WEBHOOK_ALLOWED_ADDRESSES),
  };
}

const NAT64 = parseCidr('64:ff9b::/96')!;

/** The IPv4 address an IPv6 address stands for (IPv4-mapped, NAT64), or the address itself. */
function judged(ip: Ip): Ip {
  const unmapped = unmapIpv4(ip);
  if (unmapped.version === 6 && unmapped.value >= NAT64.first && unmapped.value <= NAT64.last) {
    return { version: 4, value: unmapped.value & 0xffffffffn };
  }
  return unmapped;
}

/** Why the address may not receive webhooks, or null when it may. */
export function addressProblem(address: string, allowed: readonly Cidr[]): string | null {
  const ip = parseIp(address.replace(/^\[|\]$/g, ''));
  if (!ip) return `"${address}" is not an IP address`;
  const inside = judged(ip);
  for (const block of [ip, inside]) {
    if (allowed.some((c) => c.version === block.version && block.value >= c.first && block.value <= c.last)) {
      return null;
    }
  }
  const bogon = findIpBogon(inside);
  return bogon ? `${address} is not a public address (${bogon.name}, ${bogon.prefix})` : null;
}

const systemResolve = (host: string) => dns.promises.lookup(host, { all: true, verbatim: true });

/** Every address of the host, each checked; throws WebhookUrlError naming the first refused one. */
export async function publicAddresses(host: string, options: GuardOptions): Promise<LookupAddress[]> {
  const bare = host.replace(/^\[|\]$/g, '');
  const literal = parseIp(bare);
  const addresses = literal
    ? [{ address: bare, family: literal.version }]
    : await (options.resolve ?? systemResolve)(bare).catch((error: Error) => {
        throw new WebhookUrlError(`cannot resolve ${bare}: ${error.message}`);
      });
  if (addresses.length === 0) throw new WebhookUrlError(`${bare} has no addresses`);
  for (const { address } of addresses) {
    const problem = addressProblem(address, options.allowed);
    if (problem) throw new WebhookUrlError(`refused: ${bare} resolves to ${problem}`);
  }
  return addresses;
}

/** Checks a URL as given at creation and before each attempt; returns it parsed. */
export async function checkWebhookUrl(text: string, options: GuardOptions): Promise<URL> {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new WebhookUrlError(`"${text}" is not a URL: expected https://host/path`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && options.allowHttp)) {
    throw new WebhookUrlError(
      `${url.protocol} URLs are refused: webhooks go to https${options.allowHttp ? ' or http' : ''} only`,
    );
  }
  if (url.username || url.password)
    throw new WebhookUrlError('a webhook URL may not hold a user or password');
  await publicAddresses(url.hostname, options);
  return url;
}

type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/** A `lookup` for net/tls.connect that only ever hands out checked addresses. */
export function guardedLookup(options: GuardOptions) {
  return (host: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    publicAddresses(host, options).then(
      (addresses) => {
        if (lookupOptions.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: Error) => callback(error, ''),
    );
  };
}
