/**
 * The address a refused-key counter is kept for (docs/api.md#authentication): an IPv4 address as
 * is, an IPv4-mapped IPv6 address (`::ffff:192.0.2.1`) as its IPv4 address, any other IPv6
 * address as its /64 (one customer usually holds a whole /64, so per-address counting would let
 * them rotate through 2^64 addresses). Which address is the client's is the HTTP stack's (server/http/server.ts):
 * the socket's, or X-Forwarded-For's when the socket belongs to a TRUST_PROXY proxy.
 */
import net from 'node:net';

/** Expands an IPv6 address to its eight 16-bit groups (null when it is not one). */
function ipv6Groups(address: string): number[] | null {
  const zone = address.indexOf('%');
  const text = zone >= 0 ? address.slice(0, zone) : address;
  if (!net.isIPv6(text)) return null;
  // A dotted IPv4 tail (::ffff:192.0.2.1) becomes its two hex groups.
  const hex = text.replace(
    /(\d+)\.(\d+)\.(\d+)\.(\d+)$/,
    (_m, a: string, b: string, c: string, d: string) =>
      `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const double = hex.indexOf('::');
  if (double < 0) return groups(hex);
  const left = groups(hex.slice(0, double));
  const right = groups(hex.slice(double + 2));
  return [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** `192.0.2.1`, `2001:db8:1:2::/64`, or the raw text for something that is not an address. */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  if (net.isIPv4(address)) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (mapped) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** TRUST_PROXY as a list of trusted proxies (proxy-addr's form): false when empty. */
export function trustProxyOption(setting: string): false | string[] {
  const list = setting
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list.length === 0 ? false : list;
}
