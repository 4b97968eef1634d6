/**
 * A transaction is written once as steps: a generator that yields each compiled query and is
 * handed back its rows. Driven synchronously, a SQLite transaction never gives the event loop a
 * turn while it holds the file's write lock, so a second connection to the file in the same process
 * (a second store) can never wait for a lock that only this thread could release. kysely's own
 * SQLite driver runs each query asynchronously: with it, two stores on one file in one process
 * stalled for the whole busy timeout and failed with SQLITE_BUSY (test/accounts/pg-store.test.ts).
 */
import type { Compilable, CompiledQuery } from 'kysely';

/** The queries of one transaction: yields each one, is handed back its rows, returns the result. */
export type Steps<T> = Generator<CompiledQuery, T, unknown[]>;

/** Inside steps: `const rows = yield* rowsOf(query)`. */
export function* rowsOf<R>(query: Compilable<R>): Steps<R[]> {
  return (yield query.compile()) as R[];
}

export function* firstOf<R>(query: Compilable<R>): Steps<R | undefined> {
  return (yield* rowsOf(query))[0];
}

/** Drives steps with a synchronous query function. */
export function runSteps<T>(steps: Steps<T>, run: (query: CompiledQuery) => unknown[]): T {
  for (let next = steps.next(); ; next = steps.next(run(next.value))) if (next.done) return next.value;
}

/** Drives steps with an asynchronous query function. */
export async function runStepsAsync<T>(
  steps: Steps<T>,
  run: (query: CompiledQuery) => Promise<unknown[]>,
): Promise<T> {
  for (let next = steps.next(); ; next = steps.next(await run(next.value))) if (next.done) return next.value;
}
