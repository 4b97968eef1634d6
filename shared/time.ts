/** Times are kept as whole epoch seconds internally and shown as ISO 8601 UTC on the wire. */

/** Recent conversions: lookups repeat the same few observation times (one per collection round). */
const ISO_CACHE = new Map<number, string>();
const ISO_CACHE_SIZE = 50_000;

export function toIso(epochSeconds: number): string {
  let iso = ISO_CACHE.get(epochSeconds);
  if (iso === undefined) {
    iso = new Date(epochSeconds * 1000).toISOString().replace('.000Z', 'Z');
    if (ISO_CACHE.size >= ISO_CACHE_SIZE) ISO_CACHE.clear();
    ISO_CACHE.set(epochSeconds, iso);
  }
  return iso;
}

/** Parses an ISO 8601 timestamp with an offset (or Z); null when it is not one. */
export function parseIsoToEpoch(text: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1000);
}

export function nowEpoch(): number {
  return Math.floor(Date.now() / 1000);
}

/** Release id of the form YYYYMMDDTHHMMSSZ. */
export function releaseIdFor(epochSeconds: number): string {
  return toIso(epochSeconds).replace(/[-:]/g, '').replace(/\.\d+/, '');
}
