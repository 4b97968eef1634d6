import v8 from 'node:v8';
import vm from 'node:vm';

let gc: (() => void) | null = null;

/**
 * A full garbage collection now. After a phase that leaves hundreds of MB of garbage (the ASN
 * mapping, reading the intervals), V8 would otherwise keep it while the next phase works in SQLite
 * without allocating, and the peak RSS of the two threads adds up; the release budget is 1.5 GB.
 */
export function collectGarbage(): void {
  if (!gc) {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as () => void;
  }
  gc();
}
