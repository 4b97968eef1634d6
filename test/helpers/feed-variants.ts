/**
 * Damaged copies of a real feed file, made at test time, for the quality-gate tests
 * (test/builder/feed-gate.test.ts, test/builder/verify-gates-shared.ts): truncated to half its
 * bytes (a download cut short: the last line may be cut too), emptied, and with its largest range
 * removed (a publisher's bad day). Line formats only: every line is a record or a comment.
 */
import { CoverageCounter } from '../../builder/coverage.js';
import type { SourceDefinition } from '../../builder/sources/types.js';

/** The first half of the bytes. */
export function truncatedHalf(bytes: Buffer): Buffer {
  return bytes.subarray(0, Math.floor(bytes.length / 2));
}

/** The addresses one line of the feed covers (0 for a comment, header or rejected line). */
function lineSize(source: SourceDefinition, line: string, version: 4 | 6): bigint {
  const counter = new CoverageCounter();
  try {
    for (const record of source.parse(line, 'line').records) counter.addRecord(source.kind, record);
  } catch {
    return 0n;
  }
  const total = counter.total();
  return version === 4 ? BigInt(total.ipv4) : total.ipv6;
}

/**
 * The text without the line of the largest range of `version` (the first of equals), and that
 * line. Throws when no line holds a range of that family.
 */
export function withoutLargestRange(
  source: SourceDefinition,
  text: string,
  version: 4 | 6,
): { text: string; removed: string } {
  const lines = text.split('\n');
  let best = -1;
  let bestSize = 0n;
  lines.forEach((line, i) => {
    const size = lineSize(source, line, version);
    if (size > bestSize) {
      best = i;
      bestSize = size;
    }
  });
  if (best < 0) throw new Error(`${source.name}: no line holds an IPv${version} range`);
  const removed = lines[best]!;
  lines.splice(best, 1);
  return { text: lines.join('\n'), removed };
}
