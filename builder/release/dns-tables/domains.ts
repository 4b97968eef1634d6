/**
 * The domain table of a release: ids in seed-rank order, then the other observed names; the map
 * from the state's dns_name ids to domain ids, and the names in id order for the worker thread.
 */
import type Database from 'better-sqlite3';
import { RELEASE_INDEXES } from '../../../shared/release-schema.js';
import { READ_ROWS } from './intervals.js';

/** The unique index of domain.name (writeDomains builds it; build.ts the other indexes). */
export const DOMAIN_NAME_INDEX = RELEASE_INDEXES.find((ddl) => / ON domain /.test(ddl))!;

/** The domain table (ids in seed-rank order, then other observed names); returns dns_name id -> domain id. */
export function writeDomains(db: Database.Database): Int32Array {
  // A name can come twice (a seed name www.x and the www. name of the seed name x): the first in
  // (rank, apex before www.) order is kept. Deduplicated by a GROUP BY and inserted without a
  // unique index, which is built after: 1-2 s less on the full-scale bench than a UNIQUE
  // column filled in rank order (a B-tree insert at a random place per name).
  db.exec(`
    CREATE TEMP TABLE resolved AS
      SELECT domain AS name, rank, 0 AS www FROM st.seed
      UNION ALL SELECT 'www.' || domain, rank, 1 FROM st.seed WHERE domain NOT LIKE 'www.%';
    INSERT INTO domain (name, rank, in_seed)
      SELECT name, key >> 1, 1 FROM (SELECT name, min(rank * 2 + www) AS key FROM resolved GROUP BY name)
      ORDER BY key, name;
    DROP TABLE temp.resolved;
    ${DOMAIN_NAME_INDEX};
  `);
  // Usually every observed name is a seed name or its www. name: the map of the seed domains
  // then covers all of dns_name, and the names need not be looked up twice.
  const seedOnly = readNameMap(db);
  let mapped = 0;
  for (let nameId = 1; nameId < seedOnly.length; nameId++) if (seedOnly[nameId] !== 0) mapped++;
  if (mapped === (db.prepare(`SELECT count(*) FROM st.dns_name`).pluck().get() as number)) return seedOnly;
  db.exec(
    `INSERT OR IGNORE INTO domain (name, rank, in_seed) SELECT name, NULL, 0 FROM st.dns_name ORDER BY name`,
  );
  return readNameMap(db);
}

/**
 * dns_name id -> domain id (0 = the name has no domain), from the domain table already written.
 */
export function readNameMap(db: Database.Database): Int32Array {
  const maxId = (db.prepare(`SELECT coalesce(max(id), 0) FROM st.dns_name`).pluck().get() as number) ?? 0;
  const map = new Int32Array(maxId + 1);
  const chunk = db.prepare(
    `SELECT count(*), max(nid), group_concat(nid || ',' || did) FROM (
       SELECT n.id AS nid, d.id AS did FROM st.dns_name n JOIN domain d ON d.name = n.name
       WHERE n.id > ? ORDER BY n.id LIMIT ${READ_ROWS * 4})`,
  );
  let after = -1;
  for (;;) {
    const [count, last, text] = chunk.raw().get(after) as [number, number | null, string | null];
    if (count === 0) break;
    const pairs = JSON.parse(`[${text!}]`) as number[];
    for (let i = 0; i < pairs.length; i += 2) map[pairs[i]!] = pairs[i + 1]!;
    after = last!;
  }
  return map;
}

/** The domain names in id order (ids are consecutive from firstId), in shared memory. */
export interface SharedDomainNames {
  firstId: number;
  /** The names, newline-separated (PackedText bytes). */
  bytes: Uint8Array;
}

/** The domain names in id order (ids are consecutive), in shared memory. */
export function readDomainNames(db: Database.Database): SharedDomainNames {
  const firstId = (db.prepare(`SELECT coalesce(min(id), 1) FROM domain`).pluck().get() as number) ?? 1;
  const chunk = db.prepare(
    `SELECT count(*), max(id), group_concat(name, char(10)) FROM (SELECT id, name FROM domain WHERE id > ? ORDER BY id LIMIT 65536)`,
  );
  const parts: string[] = [];
  let after = -1;
  for (;;) {
    const [count, last, text] = chunk.raw().get(after) as [number, number | null, string | null];
    if (count === 0) break;
    parts.push(text!);
    after = last!;
  }
  const joined = parts.join('\n');
  const bytes = Buffer.from(new SharedArrayBuffer(Buffer.byteLength(joined)));
  bytes.write(joined, 0, 'utf8');
  return { firstId, bytes };
}
