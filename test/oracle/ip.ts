/**
 * Address arithmetic of the oracle, on the `ip-address` package (which the service does not use)
 * and BigInt. Deliberately independent of shared/ip.ts: the syntax checks below are written from
 * RFC 791 (dotted quad without leading zeros) and RFC 4291 section 2.2 (IPv6 text forms).
 */
import { Address4, Address6 } from 'ip-address';

export type Family = 4 | 6;

export interface Address {
  family: Family;
  value: bigint;
}

/** An aligned block of addresses. */
export interface Block {
  first: bigint;
  last: bigint;
  length: number;
}

export interface Cidr extends Block {
  family: Family;
  /** Canonical text: host bits cleared, IPv6 per RFC 5952. */
  text: string;
}

export const BITS: Record<Family, number> = { 4: 32, 6: 128 };
export const MAX: Record<Family, bigint> = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n };

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])';
const DOTTED_QUAD = new RegExp(`^${OCTET}\\.${OCTET}\\.${OCTET}\\.${OCTET}$`);
const H16 = /^[0-9A-Fa-f]{1,4}$/;

/** A strict dotted quad: four decimal numbers 0-255, no leading zeros, nothing else. */
export function isDottedQuad(text: string): boolean {
  return DOTTED_QUAD.test(text);
}

/** One of the three text forms of RFC 4291 section 2.2 (no zone, no prefix length). */
export function isIpv6Text(text: string): boolean {
  const lastColon = text.lastIndexOf(':');
  if (lastColon < 0) return false;
  let hex = text;
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    // Form 3: the low-order 32 bits as a dotted quad; it stands for two 16-bit pieces.
    if (!isDottedQuad(tail)) return false;
    hex = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const halves = hex.split('::');
  if (halves.length > 2) return false;
  const pieces = (part: string) => (part === '' ? [] : part.split(':'));
  if (halves.length === 2) {
    const all = [...pieces(halves[0]!), ...pieces(halves[1]!)];
    return all.length <= 7 && all.every((p) => H16.test(p));
  }
  const all = pieces(hex);
  return all.length === 8 && all.every((p) => H16.test(p));
}

function v4Value(text: string): bigint {
  return new Address4(text).bigInt();
}

function v6Value(text: string): bigint {
  return new Address6(text).bigInt();
}

/** The address a text names, or null when it is not one address in a form the rules accept. */
export function parseAddress(text: string): Address | null {
  if (isDottedQuad(text)) return { family: 4, value: v4Value(text) };
  if (isIpv6Text(text)) return { family: 6, value: v6Value(text) };
  return null;
}

const MAPPED_PREFIX = 0xffffn << 32n;

/** What the service looks up for a query text: IPv4-mapped IPv6 (::ffff:0:0/96) becomes IPv4. */
export function lookupAddress(text: string): Address | null {
  const address = parseAddress(text);
  if (!address) return null;
  if (address.family === 6 && address.value >> 32n === 0xffffn) {
    return { family: 4, value: address.value - MAPPED_PREFIX };
  }
  return address;
}

export function formatAddress(address: Address): string {
  return address.family === 4
    ? Address4.fromBigInt(address.value).correctForm()
    : Address6.fromBigInt(address.value).correctForm();
}

export function formatValue(family: Family, value: bigint): string {
  return formatAddress({ family, value });
}

/** A CIDR of a feed: "address/length" with either family; host bits are cleared, not refused. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const address = parseAddress(text.slice(0, slash));
  const lengthText = text.slice(slash + 1);
  if (!address || !/^(0|[1-9][0-9]{0,2})$/.test(lengthText)) return null;
  const length = Number(lengthText);
  if (length > BITS[address.family]) return null;
  return cidrOf(address.family, address.value, length);
}

/** The block of the given length holding value. */
export function cidrOf(family: Family, value: bigint, length: number): Cidr {
  const hostBits = BigInt(BITS[family] - length);
  const first = (value >> hostBits) << hostBits;
  const last = first + (1n << hostBits) - 1n;
  return { family, first, last, length, text: `${formatValue(family, first)}/${length}` };
}

/** The single-address block (/32 or /128). */
export function hostCidr(address: Address): Cidr {
  return cidrOf(address.family, address.value, BITS[address.family]);
}

/**
 * The smallest exact CIDR decomposition of [first, last]: from first upward, each time the
 * largest aligned block that does not pass last.
 */
export function decompose(family: Family, first: bigint, last: bigint): Block[] {
  const out: Block[] = [];
  const bits = BITS[family];
  let start = first;
  while (start <= last) {
    let hostBits = 0;
    while (hostBits < bits) {
      const size = 1n << BigInt(hostBits + 1);
      if (start % size !== 0n || start + size - 1n > last) break;
      hostBits += 1;
    }
    const blockLast = start + (1n << BigInt(hostBits)) - 1n;
    out.push({ first: start, last: blockLast, length: bits - hostBits });
    if (blockLast === MAX[family]) break;
    start = blockLast + 1n;
  }
  return out;
}

/** The block of decompose(first, last) that holds value, as canonical CIDR text. */
export function routeOf(family: Family, first: bigint, last: bigint, value: bigint): string {
  for (const block of decompose(family, first, last)) {
    if (block.first <= value && value <= block.last)
      return `${formatValue(family, block.first)}/${block.length}`;
  }
  throw new Error(`routeOf: ${formatValue(family, value)} is outside its row`);
}
