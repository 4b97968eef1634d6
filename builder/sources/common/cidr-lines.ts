/** Plain CIDR lists (one per line) and RFC 8805 geofeeds (CIDR in column 1 of a CSV). */
import type { RangeCategory } from '../../../shared/vocabulary.js';
import type { ParseResult, ProviderRangeRecord } from '../types.js';
import { forEachLine, isBlankOrComment } from './lines.js';
import { checkPrefix, ProviderRangeCollector } from './provider-ranges.js';
import { utcTimestamp } from './timestamps.js';

export interface CidrLinesOptions {
  provider: string;
  category: RangeCategory;
  metadata: Readonly<Record<string, string>>;
  /**
   * `single`: exactly one CIDR per line. `first-column`: a CSV line whose first column is the
   * CIDR (an RFC 8805 geofeed `prefix,country,region,city,postal`, or a bare CIDR); the other
   * columns are not read: the service offers no geolocation.
   */
  columns: 'single' | 'first-column';
  /** A comment that carries the publisher's timestamp in its first group, e.g. Linode's `# Last modified: …`. */
  timestampComment?: RegExp;
}

/** Blank lines and `#` comments are skipped; every other line is one data row. */
export function parseCidrLines(
  text: string,
  _file: string,
  options: CidrLinesOptions,
): ParseResult<ProviderRangeRecord> {
  const collector = new ProviderRangeCollector(options.provider);
  let publishedAt: string | undefined;
  const where = options.columns === 'single' ? 'the line (one CIDR per line)' : 'column 1';
  forEachLine(text, (line, lineNumber) => {
    if (isBlankOrComment(line)) {
      if (options.timestampComment && publishedAt === undefined) {
        const m = options.timestampComment.exec(line);
        if (m?.[1]) publishedAt = utcTimestamp(m[1]) ?? undefined;
      }
      return;
    }
    let field = line;
    if (options.columns === 'first-column') {
      const comma = line.indexOf(',');
      if (comma >= 0) field = line.slice(0, comma);
    }
    collector.add(checkPrefix(field.trim(), where), options.category, options.metadata, lineNumber);
  });
  return collector.result(publishedAt);
}
