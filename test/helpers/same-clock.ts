/**
 * Two requests made one after the other may straddle a second boundary, so the `age_seconds` of a
 * domain's current states (now minus last_confirmed) may differ by one between their answers.
 * These helpers take the other answer's value where the two differ by at most a second; any other
 * difference, or a larger one, still fails the comparison.
 */

const AGE = /"age_seconds":(\d+)/g;

/** `text` (a JSON body) with each `age_seconds` taken from `expected` where they differ by ≤ 1. */
export function sameClockText(text: string, expected: string): string {
  const wanted = [...expected.matchAll(AGE)].map((m) => Number(m[1]));
  let i = 0;
  return text.replace(AGE, (match, value: string) => {
    const want = wanted[i++];
    return want !== undefined && Math.abs(Number(value) - want) <= 1 ? `"age_seconds":${want}` : match;
  });
}

/** The same for a parsed answer: a copy of `answer` with the current states' ages of `expected`. */
export function sameClock(answer: unknown, expected: unknown): unknown {
  return JSON.parse(sameClockText(JSON.stringify(answer), JSON.stringify(expected)));
}
