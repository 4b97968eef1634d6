/**
 * V8 settings every server process applies before it serves (docs/decisions/0024-no-pretenuring.md).
 *
 * `--no-allocation-site-pretenuring`: V8 may decide, from the survival of one young-generation
 * collection, that every object a piece of code creates is long-lived and allocate them in the old
 * generation from then on. On this server that decision is a coin toss (a collection that happens
 * while a turn's answers wait to be written, or while the range tables load, sees most objects of
 * the request path alive) and, once taken, it stays: the request path's short-lived objects then
 * fill the old generation (4 MB per young collection on the full-scale bench), which is collected
 * every second or two, and each young collection walks the old objects that point at young ones
 * (7–10 ms instead of about 1). The server's long-lived data (range tables, caches) is loaded or
 * kept on purpose, so it gains nothing from pretenuring.
 */
import v8 from 'node:v8';

export const SERVER_V8_FLAGS = ['--no-allocation-site-pretenuring'] as const;

let applied = false;

/** Sets SERVER_V8_FLAGS in this process (once; Node keeps V8's flags writable after start). */
export function applyServerV8Flags(): void {
  if (applied) return;
  for (const flag of SERVER_V8_FLAGS) v8.setFlagsFromString(flag);
  applied = true;
}
