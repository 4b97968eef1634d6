/**
 * V8 settings every server process applies before it serves (docs/decisions/0024-no-pretenuring.md).
 *
 * `--no-allocation-site-pretenuring`: V8 may decide, from the survival of one young-generation
 * collection, that every object a piece of code creates is long-lived and allocate them in the old
 * generation from then on. On this server that decision was taken in some processes and not in
 * others, at random, and once taken it stayed: the old generation then grew about 4 MB per young
 * collection on the full-scale bench, was collected every second or two, and each young collection
 * took 7–10 ms instead of about 1. The server's long-lived data (range tables, caches) is loaded or
 * kept on purpose, so it gains nothing from pretenuring.
 */
import v8 from 'node:v8';

const SERVER_V8_FLAGS = ['--no-allocation-site-pretenuring'];

/** Sets SERVER_V8_FLAGS in this process (Node keeps V8's flags writable after start). */
export function applyServerV8Flags(): void {
  for (const flag of SERVER_V8_FLAGS) v8.setFlagsFromString(flag);
}
