/** Publisher timestamps → ISO 8601 UTC (whole seconds, like every time the service shows). */
import { toIso } from '../../../shared/time.js';

// 2026-08-21T01:05:42.583377, 2013-08-19 04:02:03, 2026-08-21T14:45:42Z, and AWS's 2026-08-22-15-17-05.
const TIMESTAMP_RE =
  /^(\d{4})-(\d{2})-(\d{2})[T -](\d{2})[:-](\d{2})[:-](\d{2})(?:\.\d{1,9})?(Z|[+-]00:?00)?$/;

/**
 * Reads a publisher timestamp that has no zone (or Z / +00:00) as UTC. All the feeds that
 * carry one (AWS createDate, Google creationTime, Oracle last_updated_timestamp, TorDNSEL
 * Downloaded, Linode's "Last modified") publish UTC. Null when it is not such a timestamp.
 */
export function utcTimestamp(text: string): string | null {
  const m = TIMESTAMP_RE.exec(text.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(ms);
  if (
    check.getUTCFullYear() !== year ||
    check.getUTCMonth() !== month - 1 ||
    check.getUTCDate() !== day ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  ) {
    return null;
  }
  return toIso(ms / 1000);
}
