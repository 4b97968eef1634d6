/** Times are kept as whole epoch seconds internally and shown as ISO 8601 UTC on the wire. */

/** The last second that toIso writes by arithmetic: 9999-12-31T23:59:59Z. */
const LAST_FOUR_DIGIT_YEAR = 253_402_300_799;

const pad2 = (n: number) => (n < 10 ? `0${n}` : `${n}`);

/**
 * ISO 8601 UTC to the second, e.g. `2026-11-26T12:00:00Z`. Whole seconds from 1970 to 9999 are
 * written by arithmetic (the civil-from-days algorithm of Howard Hinnant), allocating only the
 * string: lookups convert the observation times of every answer, tens of thousands of distinct
 * seconds on a large release, and a cache of them was thrown away whole, in the old generation,
 * every 50,000 conversions. Other values as `Date.prototype.toISOString` writes them, less `.000`.
 */
export function toIso(epochSeconds: number): string {
  if (!Number.isInteger(epochSeconds) || epochSeconds < 0 || epochSeconds > LAST_FOUR_DIGIT_YEAR) {
    return new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');
  }
  const days = Math.floor(epochSeconds / 86_400);
  const inDay = epochSeconds - days * 86_400;
  const hour = Math.floor(inDay / 3600);
  const minute = Math.floor((inDay % 3600) / 60);
  const second = inDay % 60;
  // Days since 0000-03-01, in 400-year eras (no era before 1970 here, so no negative division).
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const dayOfEra = z - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100));
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  return `${year}-${pad2(month)}-${pad2(day)}T${pad2(hour)}:${pad2(minute)}:${pad2(second)}Z`;
}

/** Parses an ISO 8601 timestamp with an offset (or Z); null when it is not one. */
export function parseIsoToEpoch(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

/**
 * A moment given by a user: an ISO 8601 date (its first second, UTC) or timestamp (UTC when it has
 * no offset), in epoch seconds; null when it is neither, or outside the years 1970 to 9999.
 */
export function parseInstant(text: string): number | null {
  const date = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  let ms: number;
  if (date) {
    const [, y, m, d] = date.map(Number) as [number, number, number, number];
    ms = Date.UTC(y, m - 1, d);
    // 2026-02-30 is not a date.
    const back = new Date(ms);
    if (back.getUTCFullYear() !== y || back.getUTCMonth() !== m - 1 || back.getUTCDate() !== d) return null;
  } else if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(text)) {
    ms = Date.parse(/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? text : `${text}Z`);
  } else return null;
  if (Number.isNaN(ms) || ms < 0 || ms > LAST_FOUR_DIGIT_YEAR * 1000) return null;
  return Math.floor(ms / 1000);
}

export function nowEpoch(): number {
  return Math.floor(Date.now() / 1000);
}

/** Release id of the form YYYYMMDDTHHMMSSZ. */
export function releaseIdFor(epochSeconds: number): string {
  return toIso(epochSeconds).replace(/[-:]/g, '').replace(/\.\d+/, '');
}
