/** Reading one key's version at an epoch from a versioned table (`*_hist`, keyed by (key, e_from)). */
import { statement } from '../common.js';
import type { Release } from '../release.js';
import type { Epoch } from './common.js';

/**
 * The columns of the version of a key valid at `epoch`, or undefined when the key had none then.
 * `sql` selects the columns, then e_to, of `WHERE <key> = ? AND e_from <= ? ORDER BY e_from DESC
 * LIMIT 1` (one seek of the primary key): the newest version begun by then, valid unless it had
 * ended by then. Rows come raw (arrays); e_to is dropped.
 */
export function versionAt<R extends unknown[]>(
  release: Release,
  sql: string,
  key: string | number,
  epoch: Epoch,
): R | undefined {
  const row = statement(release, sql, true).get(key, epoch.epoch) as unknown[] | undefined;
  if (row === undefined) return undefined;
  const eTo = row.pop() as number | null;
  return eTo !== null && eTo <= epoch.epoch ? undefined : (row as R);
}
