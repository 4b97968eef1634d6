/**
 * The workers scenario of `make bench-api`: /v1/ip uniform against `server serve --workers 1` and
 * `--workers 2` (embedded defaults: the primary owns the counters), req/s and the CPU time the
 * server's processes (primary and workers) spend per request, from /proc. On a machine without
 * cores for the load generator beside the workers, req/s cannot scale and the figure that says
 * whether workers cost anything is the CPU per request.
 */
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import { settled, withCpuPerRequest, type ServerBenchOptions } from './processes.js';
import { runWrk, spread, summarize, type WrkOptions } from './wrk.js';

export interface WorkersBenchOptions extends ServerBenchOptions {
  server: string;
  workers: number[];
}

export async function benchWorkers(o: WorkersBenchOptions): Promise<string[]> {
  const cores = os.availableParallelism();
  const lines = [
    `| Workers | req/s | req/s against ${o.workers[0]} | CPU µs per request | p99 ms | socket errors |`,
    `|---|---|---|---|---|---|`,
  ];
  // One server per worker count, all started first; then the runs alternate between them (run 1 of
  // each, run 2 of each, …), so that a machine that slows down or speeds up during the section
  // (these VMs do, within minutes) weighs on every worker count alike. An idle server costs no CPU.
  const perRequest = new Map<number, number>();
  const servers: Array<{ workers: number; child: ChildProcess; common: Omit<WrkOptions, 'seconds'> }> = [];
  try {
    for (const workers of o.workers) {
      const server = await o.startProcess(
        [
          o.server,
          '--accounts-db',
          o.accounts,
          'serve',
          '--workers',
          String(workers),
          '--port',
          '0',
          '--releases-dir',
          o.releasesDir,
          '--log-level',
          'warn',
        ],
        undefined,
        o.limits,
      );
      const common = {
        url: `http://127.0.0.1:${server.port}`,
        paths: o.paths,
        headers: { authorization: `Bearer ${o.key}` },
        connections: o.connections,
        threads: Math.max(1, Math.min(workers, cores - 1)),
      };
      servers.push({ workers, child: server.child, common });
      // Each worker first loads the release's range tables into memory (seconds of CPU on the
      // full-scale release); then warm-up until two runs in a row agree within 15% (the JIT settles).
      await settled(server.child.pid!);
      let previous = 0;
      for (let i = 0; i < 12; i++) {
        const r = await runWrk({ ...common, seconds: 3 });
        if (previous > 0 && Math.abs(r.rps - previous) / previous < 0.15) break;
        previous = r.rps;
      }
    }
    const measured = servers.map(() => ({
      rps: [] as number[],
      cpu: [] as number[],
      p99: [] as number[],
      errors: 0,
    }));
    for (let run = 0; run < o.runs; run++) {
      for (const [i, server] of servers.entries()) {
        const { result: r, cpuUs } = await withCpuPerRequest(server.child.pid!, () =>
          runWrk({ ...server.common, seconds: o.seconds }),
        );
        if (r.non2xx > 0) throw new Error(`${server.workers} workers: ${r.non2xx} non-2xx answers`);
        const m = measured[i]!;
        m.errors += r.errors;
        m.rps.push(r.rps);
        m.cpu.push(cpuUs);
        m.p99.push(r.p99ms);
      }
    }
    const firstRps = summarize(measured[0]!.rps).median;
    for (const [i, server] of servers.entries()) {
      const m = measured[i]!;
      const c = summarize(m.cpu);
      const r = summarize(m.rps);
      perRequest.set(server.workers, c.median);
      lines.push(
        `| ${server.workers} | ${spread(r)} | ${(r.median / firstRps).toFixed(2)}× | ${spread(c, 1)} | ${spread(summarize(m.p99), 2)} | ${m.errors} |`,
      );
    }
  } finally {
    for (const server of servers) await o.stop(server.child);
  }
  const [first, last] = [o.workers[0]!, o.workers[o.workers.length - 1]!];
  const growth = perRequest.get(last)! / perRequest.get(first)! - 1;
  const enough = cores >= last + 1;
  lines.push(
    '',
    `${cores} cores available; ${last} workers and the load generator ${enough ? 'each had a core' : 'shared them: req/s cannot scale here, the CPU per request is the figure'}.`,
    `CPU per request with ${last} workers against ${first}: ${growth >= 0 ? '+' : ''}${(growth * 100).toFixed(1)}% (target: at most +10%).`,
  );
  return lines;
}
