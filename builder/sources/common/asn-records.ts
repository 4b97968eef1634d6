/** Collects per-ASN records (categories, roles, names): one record per AS number. */
import type { ParseResult, Rejected } from '../types.js';

/**
 * A repeat of an ASN with the same value (X4BNet lists a few ASNs twice) is counted as read
 * and kept once; a repeat with a different value is rejected, naming the line that set it.
 */
export class AsnRecordCollector<T extends { asn: number }> {
  private readonly records: T[] = [];
  private readonly rejected: Rejected[] = [];
  private readonly firstSeen = new Map<number, { value: string; line: number }>();
  private read = 0;

  /** `what` names the value in messages (`category`, `network role`, `name`). */
  constructor(
    private readonly what: string,
    private readonly valueOf: (record: T) => string,
  ) {}

  add(record: T, line: number): void {
    this.read++;
    const value = this.valueOf(record);
    const earlier = this.firstSeen.get(record.asn);
    if (earlier) {
      if (earlier.value !== value) {
        this.rejected.push({
          line,
          reason: `expected one ${this.what} per AS number, but AS${record.asn} already has ${JSON.stringify(earlier.value)} from line ${earlier.line}, got ${JSON.stringify(value)}`,
        });
      }
      return;
    }
    this.firstSeen.set(record.asn, { value, line });
    this.records.push(record);
  }

  reject(line: number, reason: string): void {
    this.read++;
    this.rejected.push({ line, reason });
  }

  result(): ParseResult<T> {
    return { records: this.records, rejected: this.rejected, read: this.read };
  }
}
