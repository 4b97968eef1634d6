/**
 * The comparison of the as_of property (docs/decisions/0033-as-of.md): an answer with as_of=T
 * from the newest release against the answer of the release current at T. Both lose their
 * `release` block and `coverage.as_of`; a next_cursor is compared as "there is a next page" (a
 * cursor names its release); DNS times that track the last round (last_confirmed, last_observed,
 * last_positive, a state's age_seconds, a PTR's checked_at) may differ by at most the round's
 * duration; everything else, provider ranges' first_seen and last_seen included, exactly.
 */

/** A difference: where (a path into the answer), the old release's value, the as-of value. */
export interface Difference {
  path: string;
  old: unknown;
  asOf: unknown;
}

const ROUND_TIMES = new Set(['last_confirmed', 'last_observed', 'last_positive', 'checked_at']);

/** The answer as compared: no release block, no coverage.as_of, next_cursor as a boolean. */
export function comparable(answer: unknown): unknown {
  if (answer === null || typeof answer !== 'object') return answer;
  const copy = JSON.parse(JSON.stringify(answer)) as Record<string, unknown>;
  delete copy.release;
  if (copy.coverage && typeof copy.coverage === 'object')
    delete (copy.coverage as Record<string, unknown>).as_of;
  if ('next_cursor' in copy) copy.next_cursor = copy.next_cursor !== null;
  return copy;
}

function roundTime(path: string[], key: string): boolean {
  if (path.includes('provider_ranges')) return false;
  return ROUND_TIMES.has(key) || key === 'age_seconds';
}

/** Every difference between two comparable answers, DNS round times within `tolerance` seconds. */
export function differences(old: unknown, asOf: unknown, tolerance: number, at: string[] = []): Difference[] {
  const here = at.join('.') || '(answer)';
  if (Array.isArray(old) && Array.isArray(asOf)) {
    const out: Difference[] = [];
    if (old.length !== asOf.length) out.push({ path: `${here}.length`, old: old.length, asOf: asOf.length });
    for (let i = 0; i < Math.min(old.length, asOf.length); i++)
      out.push(...differences(old[i], asOf[i], tolerance, [...at, String(i)]));
    return out;
  }
  if (
    old &&
    asOf &&
    typeof old === 'object' &&
    typeof asOf === 'object' &&
    !Array.isArray(old) &&
    !Array.isArray(asOf)
  ) {
    const a = old as Record<string, unknown>;
    const b = asOf as Record<string, unknown>;
    const out: Difference[] = [];
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(key in a) || !(key in b)) {
        out.push({ path: [...at, key].join('.'), old: a[key], asOf: b[key] });
        continue;
      }
      const x = a[key];
      const y = b[key];
      if (roundTime(at, key) && x !== y && x !== null && y !== null) {
        const dx = typeof x === 'number' ? x : Date.parse(String(x)) / 1000;
        const dy = typeof y === 'number' ? y : Date.parse(String(y)) / 1000;
        if (Number.isFinite(dx) && Number.isFinite(dy) && Math.abs(dx - dy) <= tolerance) continue;
      }
      out.push(...differences(x, y, tolerance, [...at, key]));
    }
    return out;
  }
  return Object.is(old, asOf) ? [] : [{ path: here, old, asOf }];
}

/** A call's outcome: its comparable answer, or the code of the ApiError it threw. */
export type Outcome = { answer: unknown } | { error: string };

export function outcome(call: () => unknown): Outcome {
  try {
    return { answer: comparable(call()) };
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (typeof code !== 'string') throw err;
    return { error: code };
  }
}

/**
 * Every page of a paged lookup, `call(cursor)` giving one page: the first page with the list
 * field `items` holding the items of all pages, plus the page count; at most `maxPages` pages.
 */
export function allPages(
  call: (cursor: string | undefined) => Record<string, unknown>,
  items: string,
  maxPages = 200,
): Record<string, unknown> {
  const first = call(undefined);
  const all = [...((first[items] as unknown[] | undefined) ?? [])];
  let pages = 1;
  let cursor = first.next_cursor as string | null;
  while (cursor !== null && cursor !== undefined && pages < maxPages) {
    const page = call(cursor);
    all.push(...((page[items] as unknown[] | undefined) ?? []));
    cursor = page.next_cursor as string | null;
    pages++;
  }
  return { ...first, [items]: all, next_cursor: cursor ?? null, pages };
}

/** The differences of two outcomes (an error against an answer is one difference). */
export function outcomeDifferences(old: Outcome, asOf: Outcome, tolerance: number): Difference[] {
  if ('error' in old || 'error' in asOf) {
    const a = 'error' in old ? `error ${old.error}` : 'an answer';
    const b = 'error' in asOf ? `error ${asOf.error}` : 'an answer';
    return a === b ? [] : [{ path: '(outcome)', old: a, asOf: b }];
  }
  return differences(old.answer, asOf.answer, tolerance);
}
