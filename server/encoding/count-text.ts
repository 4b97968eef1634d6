/**
 * An integer's decimal text, without V8's number-string cache. `String(n)` (and a template or
 * `JSON.stringify` of a number) keeps every number it converts in that cache, an array in the old
 * generation: the texts of numbers that change with every request (the limit headers' used and
 * remaining counts, a JSON-RPC id) stayed alive long enough to be moved there and were collected by
 * mark-compacts, whose pauses reached the p99 of whatever ran next. `toFixed(0)` gives the same
 * text for an integer and caches nothing: bytes promoted per `/v1/ip` request 13.1–13.5 → 0.7–3.9
 * (`--trace-gc-nvp`, 10 s runs over 20,000 addresses; docs/decisions/0025). It costs more than a
 * cache hit: a number from a small set (a plan's limit, seconds to a reset) stays with `String()`.
 */
export function countText(n: number): string {
  return n.toFixed(0);
}
