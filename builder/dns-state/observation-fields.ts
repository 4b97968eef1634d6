/**
 * What the state machine is fed: one observation as byte ranges of a buffer. The line scanner
 * fills it in (without creating strings), or `applyRecord` writes it for an already parsed record.
 */
export class ObservationFields {
  buf: Buffer = Buffer.alloc(0);
  nameStart = 0;
  nameEnd = 0;
  /** hashBytes() (shared/hash.ts) of the name bytes. */
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
