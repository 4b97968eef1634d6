/**
 * Rows written through multi-row INSERT statements: a statement call costs about a microsecond
 * (binding a value about 0.1 µs), so rows go `rowsPerStatement` at a time through one prepared
 * statement, and the rest one by one at the end. The rows reach SQLite in the order they were
 * given, conflicts resolved the same way as with one statement per row. Used for the state
 * database (DNS state, snapshots) and for release files.
 */
import type Database from 'better-sqlite3';

/** Rows per statement unless the caller says otherwise. */
const ROWS_PER_STATEMENT = 128;

export class RowWriter {
  /** Where a row's values go, from `at` on (see endRow). */
  readonly values: unknown[];
  private n = 0;
  private readonly many: Database.Statement;
  private readonly one: Database.Statement;
  /** Rows given so far. */
  written = 0;

  /** `sql(rows)` is the statement with `rows` as its VALUES list (`(?,?),(?,?)…`). */
  constructor(
    db: Database.Database,
    private readonly columns: number,
    sql: (rows: string) => string,
    private readonly rowsPerStatement = ROWS_PER_STATEMENT,
  ) {
    const row = `(${new Array<string>(columns).fill('?').join(',')})`;
    this.many = db.prepare(sql(new Array<string>(rowsPerStatement).fill(row).join(',')));
    this.one = db.prepare(sql(row));
    this.values = new Array<unknown>(columns * rowsPerStatement);
  }

  /** Index in `values` where the next row's columns go. */
  get at(): number {
    return this.n * this.columns;
  }

  /** Call after filling one row at `at` (the hot loops fill `values` in place: no array per row). */
  endRow(): void {
    this.written++;
    if (++this.n === this.rowsPerStatement) {
      // Spread: better-sqlite3 binds arguments about twice as fast as the elements of an array.
      this.many.run(...this.values);
      this.n = 0;
    }
  }

  /** Adds one row: exactly `columns` values. */
  row(...values: unknown[]): void {
    const at = this.n * this.columns;
    for (let i = 0; i < this.columns; i++) this.values[at + i] = values[i];
    this.endRow();
  }

  /** Writes the rows not yet written (call once after the last row). */
  flush(): void {
    for (let r = 0; r < this.n; r++) {
      this.one.run(...this.values.slice(r * this.columns, (r + 1) * this.columns));
    }
    this.n = 0;
  }
}
