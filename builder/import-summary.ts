/** How `builder import` and `builder fetch` print what an import stored (importer.ts). */
import type { ImportSummary } from './importer.js';

export function printSummary(s: ImportSummary, out: (line: string) => void = console.log): void {
  const extra = s.removed !== undefined ? `, no longer listed ${s.removed}` : '';
  out(
    `${s.source}: read ${s.read}, rejected ${s.rejectedCount}, written ${s.written}${extra} (${s.seconds.toFixed(1)} s)`,
  );
  if (s.counts) {
    const c = s.counts;
    out(
      `  new ${c.created}, confirmed ${c.confirmed}, changed ${c.changed}, transient failures ${c.transient}, already applied ${c.skipped}`,
    );
  }
  for (const r of s.rejected.slice(0, 10)) out(`  rejected ${r.file}:${r.line}: ${r.reason}`);
  if (s.rejectedCount > 10) out(`  … and ${s.rejectedCount - 10} more rejected rows`);
}
