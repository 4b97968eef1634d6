/** Child processes of the benches: a node program pinned to one CPU that prints `listening on …`. */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import type { WrkResult } from './wrk.js';

/**
 * Node's flags for a process pinned to one core: no background GC threads, which would take turns
 * with the main thread on that core and stall requests for a scheduler slice
 * (docs/decisions/0013-single-core-gc.md).
 */
export const ONE_CORE_NODE_FLAGS = ['--single-threaded-gc'];

/** Extra node flags for every child (BENCH_NODE_FLAGS, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`). */
const EXTRA_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');

/**
 * Starts `node <args>` (under `taskset -c <cpu>`, with ONE_CORE_NODE_FLAGS, when cpu is given)
 * and waits for its port.
 */
export async function startNode(
  args: string[],
  cpu: number | undefined,
  env: NodeJS.ProcessEnv = {},
): Promise<{ child: ChildProcess; port: number }> {
  const [cmd, cmdArgs] =
    cpu !== undefined
      ? ['taskset', ['-c', String(cpu), process.execPath, ...ONE_CORE_NODE_FLAGS, ...EXTRA_FLAGS, ...args]]
      : [process.execPath, [...EXTRA_FLAGS, ...args]];
  const child = spawn(cmd, cmdArgs as string[], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /listening on (?:http:\/\/[^:]+:)?(\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}: ${text}`)));
  });
  child.stdout!.resume();
  return { child, port };
}

/** Peak RSS of a running child (with taskset the node process is taskset's exec'd image: same pid). */
export function peakRssMb(child: ChildProcess): number {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const m = /VmHWM:\s+(\d+) kB/.exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/**
 * CPU seconds (user + system) a process and its children (the workers of `--workers N`) have used
 * so far, from /proc.
 */
export function cpuSeconds(pid: number): number {
  let total = 0;
  const visit = (p: number) => {
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S; // utime, stime
      const children = fs.readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim();
      for (const c of children ? children.split(' ') : []) visit(Number(c));
    } catch {
      // the process is gone
    }
  };
  visit(pid);
  return total;
}

/**
 * Waits until the process `pid` and its children are idle (under 5% of one core for a second):
 * a server just started loads its release's range tables into memory in the background (seconds
 * of CPU per process on the full-scale release), which must not fall into a measurement.
 */
export async function settled(pid: number, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  let before = cpuSeconds(pid);
  while (Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = cpuSeconds(pid);
    if (now - before < 0.05) return;
    before = now;
  }
  throw new Error(`process ${pid} still busy after ${timeoutMs / 1000} s`);
}

/** A wrk run and the CPU time the process `pid` (and its children) spent per request meanwhile. */
export async function withCpuPerRequest(
  pid: number,
  run: () => Promise<WrkResult>,
): Promise<{ result: WrkResult; cpuUs: number }> {
  const before = cpuSeconds(pid);
  const result = await run();
  return { result, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / result.requests };
}

/** What the sections of bench-api that start servers of their own (metering, workers) are given. */
export interface ServerBenchOptions {
  releasesDir: string;
  /** The SQLite accounts file of the embedded servers and its bench key. */
  accounts: string;
  key: string;
  paths: string[];
  seconds: number;
  runs: number;
  connections: number;
  /** Limits the bench keys' plan (Free) gets, so the meter counts but never refuses. */
  limits: Record<string, string>;
  startProcess(
    args: string[],
    cpu: number | undefined,
    env?: NodeJS.ProcessEnv,
  ): Promise<{ child: ChildProcess; port: number }>;
  stop(child: ChildProcess): Promise<void>;
}
