/**
 * Progress of a long step: a bar on a terminal (cli-progress), plain lines otherwise, so logs
 * of cron runs stay readable.
 */
import cliProgress from 'cli-progress';

export interface Progress {
  tick(n: number): void;
  stop(): void;
}

export function startProgress(label: string, total: number | null, unit = 'lines'): Progress {
  if (process.stderr.isTTY && total !== null) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | ETA {eta}s`,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0);
    return { tick: (n) => bar.increment(n), stop: () => bar.stop() };
  }
  let done = 0;
  let lastPrint = Date.now();
  const started = Date.now();
  return {
    tick(n) {
      done += n;
      if (Date.now() - lastPrint >= 2000) {
        lastPrint = Date.now();
        const rate = Math.round(done / ((Date.now() - started) / 1000));
        process.stderr.write(`${label}: ${done}${total !== null ? `/${total}` : ''} ${unit} (${rate}/s)\n`);
      }
    },
    stop() {},
  };
}
