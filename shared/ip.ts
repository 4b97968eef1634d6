/**
 * IP address and CIDR arithmetic shared by the builder and the server.
 *
 * Addresses are kept as bigint values with their family. For storage and ordering in
 * SQLite every address is also encoded as a 16-byte key: IPv6 as itself, IPv4 as its
 * IPv4-mapped IPv6 form (::ffff:a.b.c.d), so one byte-wise comparison orders both families.
 */
export type IpVersion = 4 | 6;

export interface Ip {
  version: IpVersion;
  value: bigint;
}

export interface Cidr {
  version: IpVersion;
  first: bigint;
  last: bigint;
  prefixLength: number;
}

const IPV4_RE =
  /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const MAX = { 4: (1n << 32n) - 1n, 6: (1n << 128n) - 1n } as const;
const BITS = { 4: 32, 6: 128 } as const;

/**
 * Parses one IPv4 (strict dotted quad, no leading zeros) or IPv6 address (RFC 4291 text: hex
 * groups, at most one `::`, optionally a strict dotted quad as the last 32 bits); null if it is
 * not one. The dotted quad is only a spelling of those 32 bits: `::1.1.1.1` is the IPv6 address
 * `::101:101` (IPv4-compatible, inside ::/96), not 1.1.1.1. Only `::ffff:a.b.c.d` is IPv4-mapped
 * (unmapIpv4).
 */
export function parseIp(text: string): Ip | null {
  const quad = dottedQuad(text);
  if (quad >= 0) return { version: 4, value: BigInt(quad) };
  if (text.length > 45 || !text.includes(':')) return null;
  let hexText = text;
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) >= 0) {
    const quad = IPV4_RE.exec(text.slice(lastColon + 1));
    if (!quad) return null;
    const value = dottedQuadValue(quad);
    // `::` right before the quad stands for zero groups; `x:` needs a group after it.
    hexText = `${text.slice(0, lastColon + 1)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const value = parseIpv6HexGroups(hexText);
  return value === null ? null : { version: 6, value };
}

/**
 * The value of `text` as a strict dotted quad (what IPV4_RE accepts: four decimal octets of at most
 * 255, without leading zeros), or -1. Read character by character: the regular expression's match
 * and its four strings took 3.5 % of the server's busy time in the peer section's profile
 * (docs/decisions/0038).
 */
function dottedQuad(text: string): number {
  const length = text.length;
  if (length < 7 || length > 15) return -1;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      dots++;
      octet = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39) {
      // A leading zero ("01") is not a dotted quad's.
      if (digits === 1 && octet === 0) return -1;
      octet = octet * 10 + (c - 0x30);
      digits++;
      if (octet > 255) return -1;
    } else return -1;
  }
  return dots === 3 && digits > 0 ? value * 256 + octet : -1;
}

function dottedQuadValue(m: RegExpExecArray): number {
  return ((+m[1]! << 24) >>> 0) + (+m[2]! << 16) + (+m[3]! << 8) + +m[4]!;
}

/**
 * IPv6 text of hex groups only: 1 to 4 hex digits per group, at most one `::`, eight groups
 * (fewer with `::`); null for anything else.
 */
function parseIpv6HexGroups(text: string): bigint | null {
  const length = text.length;
  if (length < 2 || length > 39) return null;
  const head: number[] = [];
  const tail: number[] = [];
  let groups = head;
  let compressed = false;
  let i = 0;
  if (text.charCodeAt(0) === 58 /* : */) {
    if (text.charCodeAt(1) !== 58) return null;
    compressed = true;
    groups = tail;
    i = 2;
    if (i === length) return 0n;
  }
  for (;;) {
    let group = 0;
    let digits = 0;
    while (i < length) {
      const c = text.charCodeAt(i);
      const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
      if (d < 0) break;
      group = group * 16 + d;
      digits++;
      i++;
    }
    if (digits === 0 || digits > 4) return null;
    groups.push(group);
    if (i === length) break;
    if (text.charCodeAt(i) !== 58) return null;
    i++;
    if (text.charCodeAt(i) === 58) {
      if (compressed) return null;
      compressed = true;
      groups = tail;
      i++;
      if (i === length) break;
    } else if (i === length) {
      return null;
    }
  }
  const count = head.length + tail.length;
  if (compressed ? count > 7 : count !== 8) return null;
  let value = 0n;
  for (const group of head) value = (value << 16n) | BigInt(group);
  value <<= BigInt(16 * (8 - count));
  for (const group of tail) value = (value << 16n) | BigInt(group);
  return value;
}

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as its IPv4 address; any other address unchanged. */
export function unmapIpv4(ip: Ip): Ip {
  if (ip.version === 6 && ip.value >> 32n === 0xffffn) {
    return { version: 4, value: ip.value & 0xffffffffn };
  }
  return ip;
}

export function formatIp(ip: Ip): string {
  return formatValue(ip.version, ip.value);
}

export function formatValue(version: IpVersion, value: bigint): string {
  if (version === 4) return formatIpv4(Number(value));
  // One bigint → hex conversion instead of eight bigint shifts (formatting is on the import path).
  const hexDigits = value.toString(16).padStart(32, '0');
  const groups: number[] = [];
  for (let i = 0; i < 32; i += 4) groups.push(parseInt(hexDigits.slice(i, i + 4), 16));
  return formatIpv6Groups(groups);
}

/** Dotted-quad text of an IPv4 address given as a number (0 to 2^32 - 1). */
export function formatIpv4(n: number): string {
  return `${(n >>> 24) & 255}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** RFC 5952 text of eight 16-bit groups: lowercase hex, the longest run (>= 2) of zero groups as `::`. */
export function formatIpv6Groups(groups: ArrayLike<number>): string {
  // Compress the longest run (length >= 2) of zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  let text = '';
  if (bestLength < 2) {
    for (let i = 0; i < 8; i++) text += i === 0 ? groups[i]!.toString(16) : `:${groups[i]!.toString(16)}`;
    return text;
  }
  for (let i = 0; i < bestStart; i++)
    text += i === 0 ? groups[i]!.toString(16) : `:${groups[i]!.toString(16)}`;
  text += '::';
  for (let i = bestStart + bestLength; i < 8; i++) {
    text += i === bestStart + bestLength ? groups[i]!.toString(16) : `:${groups[i]!.toString(16)}`;
  }
  return text;
}

/** Canonical text of an address given as text (null if it is not one address). */
export function canonicalIp(text: string): string | null {
  const ip = parseIp(text);
  return ip ? formatIp(ip) : null;
}

/**
 * Parses `address/length`. Host bits that are set are cleared (feeds publish a few such
 * prefixes); `hostBitsSet` tells the caller so it can report it. A bare address is not a CIDR.
 */
export function parseCidr(text: string): (Cidr & { hostBitsSet: boolean }) | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const ip = parseIp(text.slice(0, slash));
  const lengthText = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(lengthText)) return null;
  const prefixLength = Number(lengthText);
  const bits = BITS[ip.version];
  if (prefixLength > bits) return null;
  const hostMask = (1n << BigInt(bits - prefixLength)) - 1n;
  const first = ip.value & ~hostMask & MAX[ip.version];
  return {
    version: ip.version,
    first,
    last: first | hostMask,
    prefixLength,
    hostBitsSet: first !== ip.value,
  };
}

export function formatCidr(cidr: Pick<Cidr, 'version' | 'first' | 'prefixLength'>): string {
  return `${formatValue(cidr.version, cidr.first)}/${cidr.prefixLength}`;
}

/** The smallest list of CIDR blocks covering exactly first..last (inclusive), in address order. */
export function rangeToCidrs(version: IpVersion, first: bigint, last: bigint): string[] {
  if (first > last) throw new RangeError('range start is after range end');
  if (version === 4) return ipv4RangeToCidrs(Number(first), Number(last));
  const bits = BITS[version];
  const out: string[] = [];
  let cursor = first;
  while (cursor <= last) {
    // Largest block aligned at `cursor` (its trailing zero bits) that does not run past `last`.
    let size = bitLength(last - cursor + 1n) - 1;
    if (cursor !== 0n) size = Math.min(size, bitLength(cursor & -cursor) - 1);
    out.push(`${formatValue(version, cursor)}/${bits - size}`);
    cursor += 1n << BigInt(size);
  }
  return out;
}

/** rangeToCidrs for IPv4 in plain numbers (exact below 2^53): the ASN mappings have 400,000 such rows. */
export function ipv4RangeToCidrs(first: number, last: number): string[] {
  const out: string[] = [];
  let cursor = first;
  while (cursor <= last) {
    // Largest power-of-two block aligned at `cursor` that does not run past `last`.
    let size = 31 - Math.clz32(last - cursor + 1);
    if (last - cursor + 1 === 2 ** 32) size = 32;
    if (cursor !== 0) {
      const low = cursor % 2 ** 32 === 0 ? 32 : 31 - Math.clz32((cursor & -cursor) >>> 0);
      size = Math.min(size, low);
    }
    out.push(`${formatIpv4(cursor)}/${32 - size}`);
    cursor += 2 ** size;
  }
  return out;
}

function bitLength(value: bigint): number {
  if (value <= 0xffffffffn) return 32 - Math.clz32(Number(value));
  return value.toString(2).length;
}

/** 16-byte sort key: IPv6 as is, IPv4 as ::ffff:a.b.c.d. */
export function ipKey(version: IpVersion, value: bigint): Buffer {
  if (version === 4) {
    const key = Buffer.alloc(16);
    key.writeUInt16BE(0xffff, 10);
    key.writeUInt32BE(Number(value), 12);
    return key;
  }
  const v = value;
  const buf = Buffer.allocUnsafe(16);
  buf.writeBigUInt64BE(v >> 64n, 0);
  buf.writeBigUInt64BE(v & 0xffffffffffffffffn, 8);
  return buf;
}

/** Inverse of ipKey. */
export function ipFromKey(key: Uint8Array): Ip {
  const buf = Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  const value = (buf.readBigUInt64BE(0) << 64n) | buf.readBigUInt64BE(8);
  if (value >> 32n === 0xffffn) return { version: 4, value: value & 0xffffffffn };
  return { version: 6, value };
}

/** Number of addresses in first..last. */
export function rangeSize(first: bigint, last: bigint): bigint {
  return last - first + 1n;
}
