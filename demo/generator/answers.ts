/**
 * The vocabulary of the demo's scenarios: the rounds, one answer per round for each name and
 * record type, and the helpers that write a domain's plan briefly.
 */
import type { DemoAddress } from './addresses.js';

/** Round start times, one week apart. */
export const DEMO_ROUNDS = [
  '2026-10-01T00:00:00Z',
  '2026-10-08T00:00:00Z',
  '2026-10-15T00:00:00Z',
  '2026-10-22T00:00:00Z',
] as const;
export const ROUNDS = DEMO_ROUNDS.length;

export type Outcome = 'positive' | 'nxdomain' | 'nodata' | 'timeout' | 'servfail' | 'malformed';

export interface Answer {
  outcome: Outcome;
  values: string[];
  cnames: string[];
}

/** The answers of one name for one record type, one per round. */
export type Series = Answer[];

export interface NamePlan {
  A: Series;
  AAAA: Series;
}

export interface DomainPlan {
  domain: string;
  /** What the domain shows in the demo (for the README and for tests). */
  scenario: string;
  apex: NamePlan;
  www: NamePlan;
}

export const pos = (values: DemoAddress[], cnames: string[] = []): Answer => ({
  outcome: 'positive',
  values: values.map((v) => v.address),
  cnames,
});
export const NODATA: Answer = { outcome: 'nodata', values: [], cnames: [] };
export const NXDOMAIN: Answer = { outcome: 'nxdomain', values: [], cnames: [] };
export const TIMEOUT: Answer = { outcome: 'timeout', values: [], cnames: [] };
export const SERVFAIL: Answer = { outcome: 'servfail', values: [], cnames: [] };

/** The same answer in every round. */
export const always = (answer: Answer): Series => Array.from({ length: ROUNDS }, () => answer);
/** Answers given round by round. */
export const rounds = (...answers: Answer[]): Series => {
  if (answers.length !== ROUNDS) throw new Error(`expected ${ROUNDS} answers, got ${answers.length}`);
  return answers;
};
/** A name answering `a` for A and `aaaa` for AAAA. */
export const name = (a: Series, aaaa: Series): NamePlan => ({ A: a, AAAA: aaaa });
/** Adds a CNAME chain to every non-failed answer of a name. */
export const chained = (plan: NamePlan, cnames: string[]): NamePlan => {
  const add = (s: Series): Series =>
    s.map((x) => (x.outcome === 'positive' || x.outcome === 'nodata' ? { ...x, cnames } : x));
  return { A: add(plan.A), AAAA: add(plan.AAAA) };
};
export const NX_NAME = name(always(NXDOMAIN), always(NXDOMAIN));

/** A domain whose www name answers exactly like the apex. */
export const mirrored = (domain: string, scenario: string, plan: NamePlan): DomainPlan => ({
  domain,
  scenario,
  apex: plan,
  www: plan,
});
