/**
 * A fast reader for the common shape of a UDP answer: a response to our one question (same bytes,
 * any letter case), not truncated, NOERROR or NXDOMAIN, with only CNAME, A, AAAA and PTR records
 * in the answer section, SOA or NS records in the authority section and an option-less OPT record
 * in the additional section, every record well-formed and ending where its RDLENGTH says.
 *
 * Anything else (another question, TC, another response code, another record type, a compression
 * pointer in the question, a record that does not parse strictly, non-ASCII names) returns null
 * and the caller decodes the message fully with dns-packet as before: the fast path only takes
 * messages on which dns-packet gives the same records, so the outcome of every answer is the one
 * the full decode gives (test/builder/collector/response.test.ts compares the two). It skips
 * dns-packet's object for every record and section, and formats addresses straight from their
 * bytes in canonical form (no text round trip through canonicalIp).
 */
import type { AnswerRecord } from './answer.js';
import { formatIpv6Groups } from '../../shared/ip.js';

export interface FastResponse {
  rcode: 'NOERROR' | 'NXDOMAIN';
  /** The answer section's CNAME, A, AAAA and PTR records, data as dns-packet decodes it (AAAA canonical). */
  records: AnswerRecord[];
}

const TYPE_A = 1;
const TYPE_NS = 2;
const TYPE_CNAME = 5;
const TYPE_SOA = 6;
const TYPE_PTR = 12;
const TYPE_AAAA = 28;
const TYPE_OPT = 41;

/** Thrown inside the reader when the message is not of the simple shape (caught below). */
const NOT_SIMPLE = new Error('not a simple answer');

/** A name's text while it is read (at most 254 bytes with the dots). */
const scratch = Buffer.alloc(256);

/** Offset after the name at `offset` (pointers followed as dns-packet follows them). */
let nameEnd = 0;

/**
 * Reads a name at `offset` with dns-packet's rules (labels of ASCII bytes, pointers only to earlier
 * data, at most 254 bytes); sets nameEnd to the offset after it in the record. The text is
 * dns-packet's: labels joined with dots, '.' for the root.
 */
function readName(msg: Buffer, offset: number): string {
  const out = scratch;
  let length = 0;
  let start = offset;
  let end = -1;
  let total = 0;
  for (;;) {
    if (offset >= msg.length) throw NOT_SIMPLE;
    const len = msg[offset++]!;
    if (len === 0) break;
    if ((len & 0xc0) === 0) {
      if (offset + len > msg.length) throw NOT_SIMPLE;
      total += len + 1;
      if (total > 254) throw NOT_SIMPLE;
      if (length > 0) out[length++] = 0x2e;
      for (let i = offset; i < offset + len; i++) {
        const c = msg[i]!;
        if (c > 0x7e || c < 0x21) throw NOT_SIMPLE;
        out[length++] = c;
      }
      offset += len;
    } else if ((len & 0xc0) === 0xc0) {
      if (offset + 1 > msg.length) throw NOT_SIMPLE;
      const jump = ((len & 0x3f) << 8) | msg[offset]!;
      if (jump >= start) throw NOT_SIMPLE;
      if (end < 0) end = offset + 1;
      offset = jump;
      start = jump;
    } else {
      throw NOT_SIMPLE;
    }
  }
  nameEnd = end < 0 ? offset : end;
  return length === 0 ? '.' : out.toString('latin1', 0, length);
}

/** Canonical text of the IPv6 address in msg[at..at+16] (RFC 5952, as shared/ip.ts formats it). */
export function formatIpv6(msg: Uint8Array, at: number): string {
  const groups = new Array<number>(8);
  for (let i = 0; i < 8; i++) groups[i] = (msg[at + i * 2]! << 8) | msg[at + i * 2 + 1]!;
  return formatIpv6Groups(groups);
}

/** Reads the records of one section from `offset`; returns the offset after them. */
function readSection(
  msg: Buffer,
  offset: number,
  count: number,
  section: 0 | 1 | 2,
  records: AnswerRecord[],
): number {
  for (let n = 0; n < count; n++) {
    const owner = readName(msg, offset);
    offset = nameEnd;
    if (offset + 10 > msg.length) throw NOT_SIMPLE;
    const type = (msg[offset]! << 8) | msg[offset + 1]!;
    const rdlength = (msg[offset + 8]! << 8) | msg[offset + 9]!;
    const rdata = offset + 10;
    const end = rdata + rdlength;
    if (end > msg.length) throw NOT_SIMPLE;
    if (section === 0) {
      let data: string;
      if (type === TYPE_A) {
        if (rdlength !== 4) throw NOT_SIMPLE;
        data = `${msg[rdata]}.${msg[rdata + 1]}.${msg[rdata + 2]}.${msg[rdata + 3]}`;
      } else if (type === TYPE_AAAA) {
        if (rdlength !== 16) throw NOT_SIMPLE;
        data = formatIpv6(msg, rdata);
      } else if (type === TYPE_CNAME || type === TYPE_PTR) {
        data = readName(msg, rdata);
        if (nameEnd !== end) throw NOT_SIMPLE;
      } else {
        throw NOT_SIMPLE;
      }
      records.push({
        name: owner,
        type: type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type === TYPE_CNAME ? 'CNAME' : 'PTR',
        data,
      });
    } else if (section === 1) {
      if (type === TYPE_SOA) {
        readName(msg, rdata);
        readName(msg, nameEnd);
        if (nameEnd + 20 !== end) throw NOT_SIMPLE;
      } else if (type === TYPE_NS) {
        readName(msg, rdata);
        if (nameEnd !== end) throw NOT_SIMPLE;
      } else {
        throw NOT_SIMPLE;
      }
    } else if (type !== TYPE_OPT || rdlength !== 0) {
      throw NOT_SIMPLE;
    }
    offset = end;
  }
  return offset;
}

/**
 * The response code and answer records of `msg` when it is a simple answer to the question of
 * `query` (a message built by encodeQuery), else null (decode it fully).
 */
export function readSimpleResponse(msg: Buffer, query: Buffer): FastResponse | null {
  if (msg.length < 12) return null;
  const flags = (msg[2]! << 8) | msg[3]!;
  // QR set, TC clear, RCODE NOERROR (0) or NXDOMAIN (3).
  if ((flags & 0x8000) === 0 || (flags & 0x0200) !== 0) return null;
  const rcode = flags & 0xf;
  if (rcode !== 0 && rcode !== 3) return null;
  if (msg[4] !== 0 || msg[5] !== 1) return null;
  // The question: the same bytes as ours, ASCII letters in any case.
  let q = 12;
  for (;;) {
    const len = query[q]!;
    if (msg[q] !== len) return null;
    if (len === 0) break;
    for (let i = q + 1; i <= q + len; i++) {
      const a = msg[i]!;
      const b = query[i]!;
      if (a !== b && (a | 0x20) !== (b | 0x20)) return null;
      if (a !== b && ((a | 0x20) < 0x61 || (a | 0x20) > 0x7a)) return null;
    }
    q += len + 1;
  }
  q++;
  if (q + 4 > msg.length) return null;
  if (msg[q] !== query[q] || msg[q + 1] !== query[q + 1]) return null;
  if (msg[q + 2] !== query[q + 2] || msg[q + 3] !== query[q + 3]) return null;
  const records: AnswerRecord[] = [];
  try {
    let offset = readSection(msg, q + 4, (msg[6]! << 8) | msg[7]!, 0, records);
    offset = readSection(msg, offset, (msg[8]! << 8) | msg[9]!, 1, records);
    readSection(msg, offset, (msg[10]! << 8) | msg[11]!, 2, records);
  } catch (error) {
    if (error === NOT_SIMPLE) return null;
    throw error;
  }
  return { rcode: rcode === 0 ? 'NOERROR' : 'NXDOMAIN', records };
}
