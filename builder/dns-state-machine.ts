/**
 * The answer-interval state machine of SPEC.md ("States and transitions"), held in memory.
 *
 * Per (name, record type) the state keeps the latest query outcome and the latest good answer:
 * its sorted canonical addresses (`vals`, a JSON array) and, at the same positions, the time each
 * address was first observed in the current run of answers (`firsts`). Every address of the
 * current answer is an open interval (first_observed = its entry of firsts, last_confirmed =
 * last_positive); an address that leaves the answer set ends its interval (a dns_ended row with
 * ended_at = the query that saw the change), one that joins opens one at the query's time,
 * addresses in both keep theirs. The same set in another order or with another TTL only advances
 * last_confirmed. A transient failure (timeout, servfail, malformed) never ends an interval.
 *
 * The whole DNS state is loaded from SQLite once, observations are applied in JavaScript, and
 * `save()` writes everything in ONE transaction: the new names, the new dns_ended rows and the
 * dns_state rows that changed. Nothing reaches the database before that commit, so a process that
 * dies mid-import leaves the state as it was, and the rerun redoes the work; a line no newer than
 * the state's last query for its name and type is skipped, so importing a file twice changes
 * nothing.
 *
 * Memory: per key (name id × 2 + record type) typed arrays for the codes and the times, and three
 * arrays of strings (the empty array shares one constant; the firsts of a new answer are shared by
 * all the keys first seen in the same second); names live as UTF-8 bytes in one arena with an
 * open-addressing hash table, so the line scanner looks them up without creating strings.
 */
import type { StateDb } from './state.js';
import type { ObservationRecord } from './sources/types.js';
import { OUTCOMES, outcomeClass } from '../shared/vocabulary.js';

export interface ApplyCounts {
  /** Names and types seen for the first time. */
  created: number;
  /** Same answer as before (last_confirmed advanced). */
  confirmed: number;
  /** Answer changed (intervals ended and/or opened). */
  changed: number;
  /** Transient failures recorded (state marked stale, answer kept). */
  transient: number;
  /** Lines no newer than the state: already applied, not applied again. */
  skipped: number;
}

export function emptyCounts(): ApplyCounts {
  return { created: 0, confirmed: 0, changed: 0, transient: 0, skipped: 0 };
}

/** Outcome codes: position in OUTCOMES + 1. 0 = no state yet (outcome) or never a good answer. */
export const OUTCOME_CODES: ReadonlyMap<string, number> = new Map(OUTCOMES.map((o, i) => [o, i + 1]));
export const POSITIVE = OUTCOME_CODES.get('positive')!;
const TRANSIENT = Uint8Array.from([0, ...OUTCOMES.map((o) => (outcomeClass(o) === 'transient' ? 1 : 0))]);
const OUTCOME_SQL = (expr: string): string =>
  `CASE ${expr} ${OUTCOMES.map((o, i) => `WHEN ${i + 1} THEN '${o}'`).join(' ')} END`;
const OUTCOME_CODE_SQL = (column: string): string =>
  `CASE ${column} ${OUTCOMES.map((o, i) => `WHEN '${o}' THEN ${i + 1}`).join(' ')} WHEN '' THEN 0 ELSE -1 END`;

/** The empty JSON array, shared by every key without addresses or CNAMEs. */
export const EMPTY_JSON = '[]';

/**
 * One observation as byte ranges of a buffer: what the line scanner fills in (without creating
 * strings), or what `applyRecord` writes for an already parsed record.
 */
export class ObservationFields {
  buf: Buffer = Buffer.alloc(0);
  nameStart = 0;
  nameEnd = 0;
  /** hashBytes() of the name bytes. */
  nameHash = 0;
  /** 0 = A, 1 = AAAA. */
  aaaa = 0;
  time = 0;
  /** OUTCOME_CODES of the outcome. */
  outcome = 0;
  /** Canonical JSON text of the sorted addresses (`["192.0.2.1"]`) in valsBuf; ignored when nVals is 0. */
  valsBuf: Buffer = this.buf;
  valsStart = 0;
  valsEnd = 0;
  nVals = 0;
  /** JSON text of the CNAME chain; a range of 2 bytes or less means the empty array. */
  cnamesStart = 0;
  cnamesEnd = 0;
}

export const FNV_OFFSET = 0x811c9dc5 | 0;
export const FNV_PRIME = 0x01000193;

/** FNV-1a of bytes [start, end); the line scanner computes the same value while it reads a name. */
export function hashBytes(b: Uint8Array, start: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, FNV_PRIME);
  return h;
}

function bytesEqualString(b: Uint8Array, start: number, end: number, s: string): boolean {
  if (s.length !== end - start) return false;
  for (let i = 0; i < s.length; i++) if (b[start + i] !== s.charCodeAt(i)) return false;
  return true;
}

/** Names as UTF-8 bytes in one arena, found by an open-addressing hash table (linear probing). */
class NameTable {
  count = 0;
  private arena = Buffer.allocUnsafe(1 << 16);
  private used = 0;
  private offsets = new Uint32Array(1024);
  private lengths = new Uint32Array(1024);
  private hashes = new Int32Array(1024);
  /** index + 1 of the name in each slot; 0 = empty. */
  private slots = new Int32Array(2048);
  private mask = 2047;

  /** Index of the name in bytes [start, end) with hash h, or -1. */
  find(b: Uint8Array, start: number, end: number, h: number): number {
    const length = end - start;
    const arena = this.arena;
    for (let p = h & this.mask; ; p = (p + 1) & this.mask) {
      const slot = this.slots[p]!;
      if (slot === 0) return -1;
      const index = slot - 1;
      if (this.hashes[index] !== h || this.lengths[index] !== length) continue;
      const offset = this.offsets[index]!;
      let i = 0;
      while (i < length && arena[offset + i] === b[start + i]) i++;
      if (i === length) return index;
    }
  }

  /** Adds a name known to be absent; returns its index. */
  add(b: Uint8Array, start: number, end: number, h: number): number {
    const length = end - start;
    if (this.used + length > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + length));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
    const arena = this.arena;
    const offset = this.used;
    for (let i = 0; i < length; i++) arena[offset + i] = b[start + i]!;
    this.used += length;
    return this.register(offset, length, h);
  }

  /** Adds a name (absent) given as a string. */
  addString(name: string): number {
    const room = name.length * 3;
    if (this.used + room > this.arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.arena.length * 2, this.used + room));
      this.arena.copy(arena, 0, 0, this.used);
      this.arena = arena;
    }
    const offset = this.used;
    const length = this.arena.write(name, offset, 'utf8');
    this.used += length;
    return this.register(offset, length, hashBytes(this.arena, offset, offset + length));
  }

  name(index: number): string {
    const offset = this.offsets[index]!;
    return this.arena.toString('utf8', offset, offset + this.lengths[index]!);
  }

  private register(offset: number, length: number, h: number): number {
    const index = this.count++;
    if (index >= this.offsets.length) {
      const size = this.offsets.length * 2;
      this.offsets = grow(this.offsets, new Uint32Array(size));
      this.lengths = grow(this.lengths, new Uint32Array(size));
      this.hashes = grow(this.hashes, new Int32Array(size));
    }
    this.offsets[index] = offset;
    this.lengths[index] = length;
    this.hashes[index] = h;
    if (this.count * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(index);
    return index;
  }

  private place(index: number): void {
    let p = this.hashes[index]! & this.mask;
    while (this.slots[p] !== 0) p = (p + 1) & this.mask;
    this.slots[p] = index + 1;
  }

  private rehash(size: number): void {
    this.slots = new Int32Array(size);
    this.mask = size - 1;
    for (let i = 0; i < this.count; i++) this.place(i);
  }
}

function grow<T extends Uint8Array | Uint32Array | Int32Array | Float64Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

export interface SaveResult {
  /** Names written to dns_name. */
  names: number;
  /** Rows appended to dns_ended. */
  ended: number;
  /** dns_state rows written. */
  states: number;
  /** 'replace': INSERT OR REPLACE of the changed keys; 'rewrite': DELETE and insert all keys. */
  mode: 'replace' | 'rewrite' | 'none';
  seconds: number;
}

/**
 * Share of changed keys from which save() rewrites dns_state whole (DELETE, then insert every key
 * in key order) instead of INSERT OR REPLACE per changed key. Measured on 4,000,000 keys (see
 * importer.ts): a rewrite costs about the same per row as an insert, a replace about 1.3 times
 * as much, so the rewrite wins once roughly three quarters of the keys changed.
 */
const REWRITE_SHARE = 0.75;

/** Rows per multi-row INSERT: fewer statement calls (about 1 µs each) without huge statements. */
const ROWS_PER_STATEMENT = 64;

/** Batches rows into multi-row INSERT statements: `values` of ROWS_PER_STATEMENT rows, then run. */
class RowWriter {
  readonly values: unknown[];
  private n = 0;
  private readonly many;
  private readonly one;
  written = 0;

  constructor(
    db: StateDb,
    private readonly columns: number,
    sql: (rows: string) => string,
  ) {
    const row = `(${new Array<string>(columns).fill('?').join(',')})`;
    this.many = db.prepare(sql(new Array<string>(ROWS_PER_STATEMENT).fill(row).join(',')));
    this.one = db.prepare(sql(row));
    this.values = new Array<unknown>(columns * ROWS_PER_STATEMENT);
  }

  /** Index in `values` where the next row's columns go. */
  get at(): number {
    return this.n * this.columns;
  }

  /** Call after filling one row at `at`. */
  endRow(): void {
    this.written++;
    if (++this.n === ROWS_PER_STATEMENT) {
      this.many.run(this.values);
      this.n = 0;
    }
  }

  flush(): void {
    for (let r = 0; r < this.n; r++) {
      this.one.run(this.values.slice(r * this.columns, (r + 1) * this.columns));
    }
    this.n = 0;
  }
}

const STATE_COLUMNS = `name_id, rtype, outcome, good_outcome, vals, firsts, cnames, last_observed, last_confirmed, last_positive`;
/** dns_state columns from 8 bound values: id, codes (AAAA × 64 + outcome × 8 + good), vals, firsts, cnames (null = []), times. */
const STATE_SELECT = `SELECT column1, CASE WHEN column2 >= 64 THEN 'AAAA' ELSE 'A' END,
  ${OUTCOME_SQL('((column2 >> 3) & 7)')}, ${OUTCOME_SQL('(column2 & 7)')},
  coalesce(column3, '${EMPTY_JSON}'), coalesce(column4, '${EMPTY_JSON}'), coalesce(column5, '${EMPTY_JSON}'),
  column6, column7, column8`;

export class DnsStateMachine {
  private readonly names = new NameTable();
  /** dns_name.id per name index (ascending: new names get ids above every stored one). */
  private nameIds = new Float64Array(1024);
  /** Names [0, storedNames) are in dns_name. */
  private storedNames = 0;
  private nextNameId = 1;

  // Per key = name index × 2 + (AAAA ? 1 : 0). Times are epoch seconds, NaN = null.
  private outcome = new Uint8Array(2048);
  private good = new Uint8Array(2048);
  private dirty = new Uint8Array(2048);
  private lastObserved = new Float64Array(2048);
  private lastConfirmed = new Float64Array(2048);
  private lastPositive = new Float64Array(2048);
  private readonly vals: string[] = [];
  private readonly firsts: string[] = [];
  private readonly cnames: string[] = [];
  private dirtyCount = 0;

  // dns_ended rows not yet saved.
  private endedKeys: number[] = [];
  private endedValues: string[] = [];
  private endedFirst: number[] = [];
  private endedLast: number[] = [];
  private endedAt: number[] = [];

  // firsts of a new answer, shared per (time, number of addresses).
  private firstsTime = NaN;
  private readonly firstsCache: string[] = [];
  // CNAME chain text last made (A and AAAA of a name usually share it).
  private lastCnames = EMPTY_JSON;

  private scratch = Buffer.allocUnsafe(4096);
  private readonly recordFields = new ObservationFields();

  constructor(private readonly db: StateDb) {
    this.load();
  }

  /** Names and keys known (loaded or seen). */
  get size(): { names: number; keys: number } {
    let keys = 0;
    for (let k = 0; k < this.names.count * 2; k++) if (this.outcome[k] !== 0) keys++;
    return { names: this.names.count, keys };
  }

  private load(): void {
    const names = this.db.prepare(`SELECT id, name FROM dns_name ORDER BY id`).raw();
    for (const row of names.iterate() as IterableIterator<[number, string]>) {
      const index = this.addName(row[1]);
      this.nameIds[index] = row[0];
      this.nextNameId = row[0] + 1;
    }
    this.storedNames = this.names.count;
    const states = this.db
      .prepare(
        `SELECT name_id, CASE rtype WHEN 'A' THEN 0 WHEN 'AAAA' THEN 1 ELSE -1 END,
           ${OUTCOME_CODE_SQL('outcome')}, ${OUTCOME_CODE_SQL(`coalesce(good_outcome, '')`)},
           nullif(vals, '${EMPTY_JSON}'), nullif(firsts, '${EMPTY_JSON}'), nullif(cnames, '${EMPTY_JSON}'),
           last_observed, last_confirmed, last_positive
         FROM dns_state ORDER BY name_id, rtype`,
      )
      .raw();
    let index = 0;
    let previousFirsts = EMPTY_JSON;
    type Row = [number, number, number, number, string | null, string | null, string | null, number, number | null, number | null];
    for (const row of states.iterate() as IterableIterator<Row>) {
      const nameId = row[0];
      while (index < this.names.count && this.nameIds[index]! < nameId) index++;
      if (index === this.names.count || this.nameIds[index] !== nameId) {
        throw new Error(`dns_state has a row for name id ${nameId}, which dns_name does not list`);
      }
      if (row[1] < 0 || row[2] <= 0 || row[3] < 0) {
        throw new Error(`dns_state row of name id ${nameId} has an unknown record type or outcome`);
      }
      const k = index * 2 + row[1];
      this.outcome[k] = row[2];
      this.good[k] = row[3];
      this.vals[k] = row[4] ?? EMPTY_JSON;
      // Keys first seen in the same second share their firsts text.
      const firsts = row[5] ?? EMPTY_JSON;
      this.firsts[k] = firsts === previousFirsts ? previousFirsts : (previousFirsts = firsts);
      this.cnames[k] = row[6] ?? EMPTY_JSON;
      this.lastObserved[k] = row[7];
      this.lastConfirmed[k] = row[8] ?? NaN;
      this.lastPositive[k] = row[9] ?? NaN;
    }
  }

  private addName(name: string): number {
    const index = this.names.addString(name);
    this.newKeys(index);
    return index;
  }

  /** Room for the two keys of a new name index. */
  private newKeys(index: number): void {
    if (index >= this.nameIds.length) this.nameIds = grow(this.nameIds, new Float64Array(this.nameIds.length * 2));
    const keys = (index + 1) * 2;
    if (keys > this.outcome.length) {
      const size = this.outcome.length * 2;
      this.outcome = grow(this.outcome, new Uint8Array(size));
      this.good = grow(this.good, new Uint8Array(size));
      this.dirty = grow(this.dirty, new Uint8Array(size));
      this.lastObserved = grow(this.lastObserved, new Float64Array(size));
      this.lastConfirmed = grow(this.lastConfirmed, new Float64Array(size));
      this.lastPositive = grow(this.lastPositive, new Float64Array(size));
    }
    this.vals.push(EMPTY_JSON, EMPTY_JSON);
    this.firsts.push(EMPTY_JSON, EMPTY_JSON);
    this.cnames.push(EMPTY_JSON, EMPTY_JSON);
  }

  /** Applies one already parsed (canonical) observation. */
  applyRecord(r: ObservationRecord, counts: ApplyCounts): void {
    const f = this.recordFields;
    const vals = JSON.stringify(r.values);
    const cnames = JSON.stringify(r.cnames);
    const room = (r.name.length + vals.length + cnames.length) * 3;
    if (room > this.scratch.length) this.scratch = Buffer.allocUnsafe(room * 2);
    const b = this.scratch;
    f.buf = b;
    f.valsBuf = b;
    f.nameStart = 0;
    f.nameEnd = b.write(r.name, 0, 'utf8');
    f.nameHash = hashBytes(b, 0, f.nameEnd);
    f.valsStart = f.nameEnd;
    f.valsEnd = f.valsStart + b.write(vals, f.valsStart, 'utf8');
    f.nVals = r.values.length;
    f.cnamesStart = f.valsEnd;
    f.cnamesEnd = f.cnamesStart + b.write(cnames, f.cnamesStart, 'utf8');
    f.aaaa = r.type === 'AAAA' ? 1 : 0;
    f.time = r.time;
    f.outcome = OUTCOME_CODES.get(r.outcome)!;
    this.apply(f, counts);
  }

  /** Applies one observation. Observations of one name and type must come in time order. */
  apply(f: ObservationFields, counts: ApplyCounts): void {
    let index = this.names.find(f.buf, f.nameStart, f.nameEnd, f.nameHash);
    if (index < 0) {
      index = this.names.add(f.buf, f.nameStart, f.nameEnd, f.nameHash);
      this.newKeys(index);
      this.nameIds[index] = this.nextNameId++;
    }
    const k = index * 2 + f.aaaa;
    const t = f.time;
    const oc = f.outcome;
    if (this.outcome[k] === 0) {
      // First sight of a name and type.
      const transient = TRANSIENT[oc] === 1;
      this.outcome[k] = oc;
      this.good[k] = transient ? 0 : oc;
      if (f.nVals > 0) {
        this.vals[k] = this.text(f.valsBuf, f.valsStart, f.valsEnd);
        this.firsts[k] = this.firstsOf(t, f.nVals);
      }
      this.cnames[k] = this.cnamesOf(f);
      this.lastObserved[k] = t;
      this.lastConfirmed[k] = transient ? NaN : t;
      this.lastPositive[k] = oc === POSITIVE ? t : NaN;
      counts.created++;
    } else if (t <= this.lastObserved[k]!) {
      counts.skipped++;
      return;
    } else if (TRANSIENT[oc] === 1) {
      // The answer is kept; only the latest query moves.
      this.outcome[k] = oc;
      this.lastObserved[k] = t;
      counts.transient++;
    } else if (this.good[k] === oc && this.sameVals(f, this.vals[k]!)) {
      // Same answer: last_confirmed advances, the CNAME chain is updated.
      this.outcome[k] = oc;
      this.lastObserved[k] = t;
      this.lastConfirmed[k] = t;
      if (oc === POSITIVE) this.lastPositive[k] = t;
      if (!this.sameCnames(f, this.cnames[k]!)) this.cnames[k] = this.cnamesOf(f);
      counts.confirmed++;
    } else {
      this.change(k, f);
      counts.changed++;
    }
    if (this.dirty[k] === 0) {
      this.dirty[k] = 1;
      this.dirtyCount++;
    }
  }

  /** A different answer: addresses that left end their interval, those that joined open one. */
  private change(k: number, f: ObservationFields): void {
    const t = f.time;
    const oldVals = this.vals[k]!;
    const newVals = f.nVals > 0 ? this.text(f.valsBuf, f.valsStart, f.valsEnd) : EMPTY_JSON;
    let firsts = f.nVals > 0 ? this.firstsOf(t, f.nVals) : EMPTY_JSON;
    if (oldVals.length > EMPTY_JSON.length) {
      const before = JSON.parse(oldVals) as string[];
      const beforeFirsts = JSON.parse(this.firsts[k]!) as number[];
      const after = f.nVals > 0 ? (JSON.parse(newVals) as string[]) : [];
      const lastConfirmed = this.lastPositive[k]!;
      for (let i = 0; i < before.length; i++) {
        if (after.includes(before[i]!)) continue;
        this.endedKeys.push(k);
        this.endedValues.push(before[i]!);
        this.endedFirst.push(beforeFirsts[i]!);
        this.endedLast.push(lastConfirmed);
        this.endedAt.push(t);
      }
      let kept = false;
      const afterFirsts = after.map((v) => {
        const i = before.indexOf(v);
        if (i < 0) return t;
        kept = true;
        return beforeFirsts[i]!;
      });
      if (kept) firsts = `[${afterFirsts.join(',')}]`;
    }
    this.outcome[k] = f.outcome;
    this.good[k] = f.outcome;
    this.vals[k] = newVals;
    this.firsts[k] = firsts;
    this.cnames[k] = this.cnamesOf(f);
    this.lastObserved[k] = t;
    this.lastConfirmed[k] = t;
    if (f.outcome === POSITIVE) this.lastPositive[k] = t;
  }

  private sameVals(f: ObservationFields, stored: string): boolean {
    if (f.nVals === 0) return stored.length === EMPTY_JSON.length;
    return bytesEqualString(f.valsBuf, f.valsStart, f.valsEnd, stored);
  }

  private sameCnames(f: ObservationFields, stored: string): boolean {
    if (f.cnamesEnd - f.cnamesStart <= EMPTY_JSON.length) return stored.length === EMPTY_JSON.length;
    return bytesEqualString(f.buf, f.cnamesStart, f.cnamesEnd, stored);
  }

  private cnamesOf(f: ObservationFields): string {
    if (f.cnamesEnd - f.cnamesStart <= EMPTY_JSON.length) return EMPTY_JSON;
    if (bytesEqualString(f.buf, f.cnamesStart, f.cnamesEnd, this.lastCnames)) return this.lastCnames;
    return (this.lastCnames = this.text(f.buf, f.cnamesStart, f.cnamesEnd));
  }

  /** A new flat string (never a slice that would keep the whole read buffer alive). */
  private text(b: Buffer, start: number, end: number): string {
    return b.toString('utf8', start, end);
  }

  /** `[t,t,…]` for n addresses first seen at t; shared by the keys of the same second. */
  private firstsOf(t: number, n: number): string {
    if (t !== this.firstsTime) {
      this.firstsTime = t;
      this.firstsCache.length = 0;
    }
    let s = this.firstsCache[n];
    if (s === undefined) {
      s = `[${new Array<number>(n).fill(t).join(',')}]`;
      this.firstsCache[n] = s;
    }
    return s;
  }

  /**
   * Writes what changed since the last save in one transaction: new names, new dns_ended rows,
   * and the dns_state rows of changed keys. After an error nothing is written and this machine
   * no longer matches the database: discard it.
   */
  save(): SaveResult {
    const started = performance.now();
    const keys = this.names.count * 2;
    let present = 0;
    for (let k = 0; k < keys; k++) if (this.outcome[k] !== 0) present++;
    const mode: SaveResult['mode'] =
      this.dirtyCount === 0 ? 'none' : this.dirtyCount >= present * REWRITE_SHARE ? 'rewrite' : 'replace';
    const result = { names: 0, ended: 0, states: 0, mode, seconds: 0 };
    this.db.transaction(() => {
      const names = new RowWriter(this.db, 2, (rows) => `INSERT INTO dns_name (id, name) VALUES ${rows}`);
      const nv = names.values;
      for (let i = this.storedNames; i < this.names.count; i++) {
        const at = names.at;
        nv[at] = this.nameIds[i];
        nv[at + 1] = this.names.name(i);
        names.endRow();
      }
      names.flush();
      result.names = names.written;
      if (process.env.DNS_SAVE_DEBUG) console.error('names', (performance.now() - started).toFixed(0));

      const ended = new RowWriter(
        this.db,
        6,
        (rows) =>
          `INSERT INTO dns_ended (name_id, rtype, value, first_observed, last_confirmed, ended_at)
           SELECT column1, CASE column2 WHEN 1 THEN 'AAAA' ELSE 'A' END, column3, column4, column5, column6
           FROM (VALUES ${rows})`,
      );
      const ev = ended.values;
      for (let i = 0; i < this.endedKeys.length; i++) {
        const k = this.endedKeys[i]!;
        const at = ended.at;
        ev[at] = this.nameIds[k >> 1];
        ev[at + 1] = k & 1;
        ev[at + 2] = this.endedValues[i];
        ev[at + 3] = this.endedFirst[i];
        ev[at + 4] = this.endedLast[i];
        ev[at + 5] = this.endedAt[i];
        ended.endRow();
      }
      ended.flush();
      result.ended = ended.written;
      if (process.env.DNS_SAVE_DEBUG) console.error('ended', (performance.now() - started).toFixed(0));

      if (mode === 'none') return;
      if (mode === 'rewrite') this.db.prepare(`DELETE FROM dns_state`).run();
      const states = new RowWriter(
        this.db,
        8,
        (rows) =>
          `INSERT ${mode === 'replace' ? 'OR REPLACE ' : ''}INTO dns_state (${STATE_COLUMNS}) ${STATE_SELECT} FROM (VALUES ${rows})`,
      );
      const sv = states.values;
      const all = mode === 'rewrite';
      for (let k = 0; k < keys; k++) {
        const oc = this.outcome[k]!;
        if (oc === 0 || (!all && this.dirty[k] === 0)) continue;
        const at = states.at;
        sv[at] = this.nameIds[k >> 1];
        sv[at + 1] = (k & 1) * 64 + oc * 8 + this.good[k]!;
        const vals = this.vals[k]!;
        sv[at + 2] = vals === EMPTY_JSON ? null : vals;
        const firsts = this.firsts[k]!;
        sv[at + 3] = firsts === EMPTY_JSON ? null : firsts;
        const cnames = this.cnames[k]!;
        sv[at + 4] = cnames === EMPTY_JSON ? null : cnames;
        sv[at + 5] = this.lastObserved[k];
        const confirmed = this.lastConfirmed[k]!;
        sv[at + 6] = confirmed === confirmed ? confirmed : null;
        const positive = this.lastPositive[k]!;
        sv[at + 7] = positive === positive ? positive : null;
        states.endRow();
      }
      states.flush();
      result.states = states.written;
      if (process.env.DNS_SAVE_DEBUG) console.error('states', (performance.now() - started).toFixed(0));
    })();
    if (process.env.DNS_SAVE_DEBUG) console.error('commit', (performance.now() - started).toFixed(0));
    this.storedNames = this.names.count;
    this.endedKeys = [];
    this.endedValues = [];
    this.endedFirst = [];
    this.endedLast = [];
    this.endedAt = [];
    this.dirty.fill(0);
    this.dirtyCount = 0;
    result.seconds = (performance.now() - started) / 1000;
    return result;
  }
}
