/** `builder collect`: one collection round with progress lines and a summary. */
import type { Settings } from '../../shared/config.js';
import { openState } from '../state.js';
import { parseResolver } from './dns-client.js';
import { formatOutcomes } from './query-pump.js';
import { recordFigures } from '../metrics.js';
import { collectRound, type RoundSummary } from './round.js';

function n(value: number): string {
  return value.toLocaleString('en-US');
}

export function printRoundSummary(s: RoundSummary, out: (line: string) => void = console.log): void {
  const f = s.forward;
  if (f) {
    const resumed =
      f.resumedAnswers > 0 ? ` (${n(f.resumedAnswers)} from the interrupted run, not asked again)` : '';
    out(
      `collect round ${s.round}: ${n(f.names)} names, ${n(f.answers)}/${n(f.names * 2)} A/AAAA answers${resumed}; ` +
        `asked ${n(f.asked)} in ${f.seconds.toFixed(1)} s (${n(Math.round(f.queriesPerSecond))} q/s)`,
    );
    out(`  outcomes: ${formatOutcomes(f.outcomes)}`);
    out(
      `  resolver: ${n(f.stats.sent)} datagrams, ${n(f.stats.retries)} retries after a timeout, ` +
        `${n(f.stats.tcp)} truncated answers asked again over TCP`,
    );
    const c = f.counts;
    out(
      `  state: new ${n(c.created)}, confirmed ${n(c.confirmed)}, changed ${n(c.changed)}, ` +
        `transient failures ${n(c.transient)}, already applied ${n(c.skipped)}`,
    );
    if (f.save) {
      out(
        `  state saved in ${(f.saveSeconds ?? 0).toFixed(1)} s (${n(f.save.names)} new names, ` +
          `${n(f.save.ended)} ended intervals, ${n(f.save.states)} states written)`,
      );
    }
  }
  const p = s.ptr;
  if (p) {
    out(
      `  PTR: ${n(p.resumed + p.asked)}/${n(p.target)} of ${n(p.observedIps)} observed IPs checked ` +
        `(${n(p.asked)} in this run); ${formatOutcomes(p.outcomes)}`,
    );
  }
  if (s.interrupted) out(`  interrupted: the next "builder collect" resumes round ${s.round}`);
  out(`  round ${s.interrupted ? 'stopped' : 'complete'} in ${s.seconds.toFixed(1)} s`);
}

/** Runs one round; SIGINT/SIGTERM stop it cleanly (a second one exits at once). */
export async function collectCommand(settings: Settings): Promise<RoundSummary> {
  const resolver = parseResolver(settings.RESOLVER);
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(130);
    console.error(`collect: ${signal}: stopping after the queries in flight (again to exit at once)`);
    controller.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const db = openState(settings.STATE_DIR);
  try {
    console.log(
      `collect: resolver ${resolver.host}:${resolver.port}, at most ${settings.DNS_MAX_IN_FLIGHT} in flight` +
        `${settings.DNS_MAX_QPS > 0 ? ` and ${settings.DNS_MAX_QPS} queries/s` : ', no queries/s cap'}, ` +
        `timeout ${settings.DNS_TIMEOUT_MS} ms × ${settings.DNS_RETRIES + 1} tries, PTR share ${settings.PTR_SHARE}`,
    );
    const summary = await collectRound(db, {
      resolver,
      timeoutMs: settings.DNS_TIMEOUT_MS,
      retries: settings.DNS_RETRIES,
      maxQps: settings.DNS_MAX_QPS,
      maxInFlight: settings.DNS_MAX_IN_FLIGHT,
      ptrShare: settings.PTR_SHARE,
      signal: controller.signal,
      progress: (line) => process.stderr.write(`${line}\n`),
    });
    printRoundSummary(summary);
    if (summary.forward) await recordFigures(settings.STATE_DIR, { collector: summary.forward.outcomes });
    return summary;
  } finally {
    db.close();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
