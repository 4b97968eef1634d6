/**
 * The admin commands of `npx server` run in this process: a commander program with the accounts
 * commands (registerAccountCommands), its output and exit code captured.
 */
import { Command, CommanderError } from 'commander';
import { registerAccountCommands } from '../../accounts/index.js';

export interface CliRun {
  out: string;
  err: string;
  code: number;
}

/** Runs `server [--accounts-db <file>] …args`. */
export async function runServerCli(file: string | null, ...args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  const program = new Command('server')
    .exitOverride()
    .configureOutput({ writeOut: (s) => out.push(s), writeErr: (s) => err.push(s) });
  registerAccountCommands(program, {
    out: (line) => out.push(`${line}\n`),
    err: (line) => err.push(`${line}\n`),
    fail: (exitCode) => (code = exitCode),
  });
  try {
    await program.parseAsync(file ? ['--accounts-db', file, ...args] : args, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    code = error.exitCode;
  }
  return { out: out.join(''), err: err.join(''), code };
}
