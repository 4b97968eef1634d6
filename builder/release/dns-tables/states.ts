import type Database from 'better-sqlite3';
import { RowWriter } from '../../row-writer.js';

/**
 * dns_state in (domain id, record type) order: the state's rows read in their own (name id) order,
 * each given its domain id from a temp table keyed by name id, then sorted by SQLite. Looking each
 * domain's rows up in the state by key instead (no sort) read the state's pages at random and
 * took half as long again (10.1 s against 6.6 s for 4 million rows).
 */
export function writeStates(db: Database.Database, nameToDomain: Int32Array): void {
  db.exec(`CREATE TEMP TABLE name_domain (name_id INTEGER PRIMARY KEY, domain_id INTEGER NOT NULL)`);
  const insert = new RowWriter(
    db,
    2,
    (rows) => `INSERT INTO temp.name_domain (name_id, domain_id) VALUES ${rows}`,
  );
  for (let nameId = 1; nameId < nameToDomain.length; nameId++)
    if (nameToDomain[nameId] !== 0) insert.row(nameId, nameToDomain[nameId]);
  insert.flush();
  // CROSS JOIN: the state is the outer loop, read in order. The sorter keeps up to a page cache's
  // worth of rows in memory before it writes a run to a temp file: small caches here (8 MiB, as
  // fast as 32) keep the memory down while the main thread reads the intervals.
  const caches = [db.pragma('cache_size', { simple: true }), db.pragma('st.cache_size', { simple: true })];
  db.pragma('cache_size = -8192');
  db.pragma('st.cache_size = -8192');
  db.exec(`
    INSERT INTO dns_state SELECT m.domain_id, s.rtype, s.outcome, s.good_outcome, s.vals, s.cnames, s.last_observed,
      s.last_confirmed, s.last_positive FROM st.dns_state s CROSS JOIN temp.name_domain m ON m.name_id = s.name_id
      ORDER BY m.domain_id, s.rtype;
    DROP TABLE temp.name_domain;
  `);
  db.pragma(`cache_size = ${caches[0] as number}`);
  db.pragma(`st.cache_size = ${caches[1] as number}`);
}
