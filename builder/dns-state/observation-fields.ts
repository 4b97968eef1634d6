/**
 * What the state machine is fed: one observation as byte ranges of a buffer. The line scanner
 * fills it in (without creating strings), or `applyRecord` writes it for an already parsed record.
 */
export class ObservationFields {
  buf: Buffer = Buffer.alloc(0);
  nameStart = 0;
  nameEnd = 0;
  /** hashBytes() of the name bytes. */
  nameHash = 0;
  /** 0 = A, 1 = AAAA. */
  aaaa = 0;
  time = 0;
  /** OUTCOME_CODES of the outcome. */
  outcome = 0;
  /** Canonical JSON text of the sorted addresses (`["192.0.2.1"]`) in valsBuf; ignored when nVals is 0. */
  valsBuf: Buffer = this.buf;
  valsStart = 0;
  valsEnd = 0;
  nVals = 0;
  /** JSON text of the CNAME chain; a range of 2 bytes or less means the empty array. */
  cnamesStart = 0;
  cnamesEnd = 0;
}

/** The hash of a name's bytes, which the name table and the line scanner both compute. */
import { FNV_OFFSET, FNV_PRIME } from '../../shared/hash.js';

export { FNV_OFFSET, FNV_PRIME };

/** FNV-1a of bytes [start, end); the line scanner computes the same value while it reads a name. */
export function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
  return h;
}
