/**
 * Runs several `builder` commands one after another in ONE process (the CLI's own program, as
 * bin/builder.js runs it): `node builder-batch.js -- <args of command 1> -- <args of command 2> …`.
 * The benchmark imports the 21 feed snapshots and the seed this way: starting a Node process and
 * loading the builder costs about half a second each, more than most feed imports themselves.
 * Prints the peak RSS (rusage) at the end as bin/builder.js does with BUILDER_REPORT_RUSAGE.
 */
import { buildProgram } from '../../builder/cli.js';

const commands: string[][] = [];
for (const arg of process.argv.slice(2)) {
  if (arg === '--') commands.push([]);
  else if (commands.length === 0) throw new Error('usage: builder-batch.js -- <args> [-- <args> …]');
  else commands[commands.length - 1]!.push(arg);
}
try {
  for (const args of commands) {
    await buildProgram().parseAsync(['node', 'builder', ...args]);
    if (process.exitCode) throw new Error(`builder ${args.join(' ')} failed (exit code ${process.exitCode})`);
  }
} catch (error) {
  console.error(`builder-batch: ${(error as Error).message}`);
  process.exitCode = process.exitCode || 2;
} finally {
  if (process.env.BUILDER_REPORT_RUSAGE) console.error(`rusage: maxrss_kb=${process.resourceUsage().maxRSS}`);
}
