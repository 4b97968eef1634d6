/**
 * Outcome codes of the DNS state in memory: the position of the outcome in OUTCOMES + 1, so that
 * a key's outcome fits a byte (0 = no state yet, or never a good answer), with the SQL that turns
 * codes back into outcome texts and texts into codes.
 */
import { OUTCOMES, outcomeClass } from '../../shared/vocabulary.js';

/** Outcome codes: position in OUTCOMES + 1. 0 = no state yet (outcome) or never a good answer. */
export const OUTCOME_CODES: ReadonlyMap<string, number> = new Map(OUTCOMES.map((o, i) => [o, i + 1]));
export const POSITIVE = OUTCOME_CODES.get('positive')!;
export const TRANSIENT = Uint8Array.from([
  0,
  ...OUTCOMES.map((o) => (outcomeClass(o) === 'transient' ? 1 : 0)),
]);
export const OUTCOME_SQL = (expr: string): string =>
  `CASE ${expr} ${OUTCOMES.map((o, i) => `WHEN ${i + 1} THEN '${o}'`).join(' ')} END`;
export const OUTCOME_CODE_SQL = (column: string): string =>
  `CASE ${column} ${OUTCOMES.map((o, i) => `WHEN '${o}' THEN ${i + 1}`).join(' ')} WHEN '' THEN 0 ELSE -1 END`;
