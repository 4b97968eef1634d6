/**
 * Canonical IP addresses in the bytes of an observation line, checked where they are (no string
 * made): what canonicalIp() would leave unchanged.
 */
import { COLON, DOT, QUOTE } from './json-bytes.js';

/** FAST_IPV4: a dotted quad without leading zeros. */
export function isCanonicalIpv4(b: Buffer, start: number, end: number): boolean {
  let p = start;
  for (let part = 1; ; part++) {
    const first = b[p]!;
    if (p >= end || first < 0x30 || first > 0x39) return false;
    let value = first - 0x30;
    let digits = 1;
    p++;
    while (p < end && b[p]! >= 0x30 && b[p]! <= 0x39) {
      if (++digits > 3) return false;
      value = value * 10 + b[p]! - 0x30;
      p++;
    }
    if ((digits > 1 && first === 0x30) || value > 255) return false;
    if (p === end) return part === 4;
    if (part === 4 || b[p] !== DOT) return false;
    p++;
  }
}

/** Index of the quote closing a canonical IPv4 address that starts at start, or -1. */
export function ipv4End(b: Buffer, start: number, last: number): number {
  let p = start;
  for (let part = 1; ; part++) {
    const first = b[p]!;
    if (p >= last || first < 0x30 || first > 0x39) return -1;
    let value = first - 0x30;
    let digits = 1;
    p++;
    while (b[p]! >= 0x30 && b[p]! <= 0x39) {
      if (++digits > 3) return -1;
      value = value * 10 + b[p]! - 0x30;
      p++;
    }
    if ((digits > 1 && first === 0x30) || value > 255) return -1;
    if (b[p] === QUOTE) return part === 4 && p < last ? p : -1;
    if (part === 4 || b[p] !== DOT) return -1;
    p++;
  }
}

/** Index of the quote closing a canonical IPv6 address (see isCanonicalIpv6) that starts at start, or -1. */
export function ipv6End(b: Buffer, start: number, last: number, groups: Int32Array): number {
  let p = start;
  while (p < last && p - start <= 39) {
    const c = b[p]!;
    if (c === QUOTE) return isCanonicalIpv6(b, start, p, groups) ? p : -1;
    if (!((c >= 0x30 && c <= 0x3a) || (c >= 0x61 && c <= 0x66))) return -1;
    p++;
  }
  return -1;
}

/**
 * True when canonicalIp() would return the text unchanged for an IPv6 address: lowercase hex
 * groups without leading zeros, and `::` exactly where RFC 5952 puts it (the longest run of two
 * or more zero groups, the first on a tie), nowhere if there is no such run.
 */
export function isCanonicalIpv6(b: Buffer, start: number, end: number, groups: Int32Array): boolean {
  const length = end - start;
  if (length < 2 || length > 39) return false;
  let count = 0;
  let gapAt = -1;
  let p = start;
  if (b[p] === COLON) {
    if (b[p + 1] !== COLON) return false;
    gapAt = 0;
    p += 2;
  }
  while (p < end) {
    const first = b[p]!;
    let value = 0;
    let digits = 0;
    while (p < end) {
      const c = b[p]!;
      const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1;
      if (d < 0) break;
      value = value * 16 + d;
      digits++;
      p++;
    }
    if (digits === 0 || digits > 4 || (digits > 1 && first === 0x30) || count === 8) return false;
    groups[count++] = value;
    if (p === end) break;
    if (b[p] !== COLON) return false;
    p++;
    if (p === end) return false;
    if (b[p] === COLON) {
      if (gapAt >= 0) return false;
      gapAt = count;
      p++;
    }
  }
  if (gapAt < 0 ? count !== 8 : count > 6) return false;
  // The longest run of zero groups over all eight (the gap stands for 8 - count zeros).
  const gap = gapAt < 0 ? 0 : 8 - count;
  let bestStart = -1;
  let bestLength = 0;
  let runStart = -1;
  for (let i = 0; i <= 8; i++) {
    const zero =
      i < 8 && (gapAt < 0 || i < gapAt ? groups[i] === 0 : i < gapAt + gap ? true : groups[i - gap] === 0);
    if (zero) {
      if (runStart < 0) runStart = i;
    } else if (runStart >= 0) {
      if (i - runStart > bestLength) {
        bestStart = runStart;
        bestLength = i - runStart;
      }
      runStart = -1;
    }
  }
  return gapAt < 0 ? bestLength < 2 : bestLength >= 2 && bestStart === gapAt && bestLength === gap;
}
