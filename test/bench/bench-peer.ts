/**
 * The MMDB peer section of `make bench-api` (issue 35): `/v1/ip` uniform, metered with a real key
 * and the full answer, against the server a user who only needs IP → network would run instead:
 * the same release exported with `builder export mmdb`, read by the npm `maxmind` reader behind
 * bare node:http (mmdb-peer-server.ts), on the same addresses. One core each (the same one, taking
 * turns), wrk on the other; the runs alternate (ours, peer, ours, peer, …), so that a machine that
 * slows down or speeds up during the section weighs on both alike. Prints req/s, CPU µs per
 * request and p99 per run, the answers' mean sizes, and the target: ours at least the peer's req/s.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import maxmind from 'maxmind';
import { request } from 'undici';
import { currentReleaseFile } from '../../builder/release/publish.js';
import { openRelease } from '../../shared/queries/index.js';
import { settled, withCpuPerRequest, type ServerBenchOptions } from './processes.js';
import { runWrk, spread, summarize, type WrkResult } from './wrk.js';

/** The compiled peer server, beside this module. */
export const PEER_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mmdb-peer-server.js');

/** Issue 35: /v1/ip uniform answers at least the peer's req/s (median of the rounds' ratios). */
export const PEER_TARGET = 1.0;

export interface PeerBenchOptions extends ServerBenchOptions {
  root: string;
  /** Rounds: one run of ours, then one of the peer, each. */
  rounds: number;
  /** An MMDB file exported before from the release under test; none: export it into `work`. */
  mmdb?: string;
  work: string;
  warmUpSeconds: number;
  /** The core of both servers (wrk gets the other); none on a machine of one core. */
  cpu?: number;
  wrkCpu?: number;
  /** Our server when the bench has started it already (the REST section's); none: one of its own. */
  ours?: { child: ChildProcess; port: number };
}

/** The release's id as the export writes it into the file's description (`ipscope release <id> …`). */
function releaseId(releasesDir: string): string {
  const release = openRelease(currentReleaseFile(releasesDir)!);
  try {
    return release.id;
  } finally {
    release.close();
  }
}

/** The MMDB file of the peer: `--mmdb` checked against the release, or a new `builder export mmdb`. */
async function peerFile(o: PeerBenchOptions, id: string): Promise<{ file: string; line: string }> {
  if (o.mmdb !== undefined) {
    const reader = await maxmind.open(o.mmdb);
    const description = (reader.metadata.description as unknown as Record<string, string>).en ?? '';
    if (!description.startsWith(`ipscope release ${id} `)) {
      throw new Error(
        `--mmdb ${o.mmdb}: not an export of the release under test (${id}); its description: ${JSON.stringify(description.slice(0, 80))}`,
      );
    }
    return { file: o.mmdb, line: `MMDB file: ${o.mmdb} (--mmdb, release ${id})` };
  }
  const file = path.join(o.work, 'peer.mmdb');
  const run = spawnSync(
    process.execPath,
    [path.join(o.root, 'bin/builder.js'), '--releases-dir', o.releasesDir, 'export', 'mmdb', '--out', file],
    { encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`builder export mmdb failed:\n${run.stdout}${run.stderr}`);
  return { file, line: run.stderr.trim() };
}

/** Mean body bytes of the answers to `paths` (each asked once, 16 at a time); fails on a non-200. */
async function meanBodyBytes(
  base: string,
  paths: string[],
  headers: Record<string, string>,
): Promise<number> {
  const unique = [...new Set(paths)];
  let total = 0;
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < unique.length) {
        const p = unique[next++]!;
        const r = await request(base + p, { headers });
        const body = Buffer.from(await r.body.arrayBuffer());
        if (r.statusCode !== 200)
          throw new Error(`${base}${p}: ${r.statusCode} ${body.toString().slice(0, 300)}`);
        total += body.length;
      }
    }),
  );
  return total / unique.length;
}

export interface PeerBenchResult {
  lines: string[];
  /** The target line, as bench-api's others: `- peer ratio ≥ 1.0: met (median ratio X, runs …)`. */
  target: string;
}

export async function benchPeer(o: PeerBenchOptions): Promise<PeerBenchResult> {
  const id = releaseId(o.releasesDir);
  const { file, line: exported } = await peerFile(o, id);
  const lines = [exported];
  const peer = await o.startProcess([PEER_SERVER, file], o.cpu);
  const own =
    o.ours ??
    (await o.startProcess(
      [
        path.join(o.root, 'bin/server.js'),
        '--accounts-db',
        o.accounts,
        'serve',
        '--workers',
        '1',
        '--port',
        '0',
        '--releases-dir',
        o.releasesDir,
        '--log-level',
        'warn',
      ],
      o.cpu,
      o.limits,
    ));
  const headers = { authorization: `Bearer ${o.key}` };
  const sides = [
    { name: 'ours', child: own.child, url: `http://127.0.0.1:${own.port}`, headers },
    { name: 'peer', child: peer.child, url: `http://127.0.0.1:${peer.port}`, headers: {} },
  ];
  try {
    await settled(own.child.pid!);
    await settled(peer.child.pid!);
    const bytes = [];
    for (const s of sides) bytes.push(await meanBodyBytes(s.url, o.paths, s.headers));
    const common = { paths: o.paths, connections: o.connections, cpu: o.wrkCpu };
    for (const s of sides)
      await runWrk({ ...common, url: s.url, headers: s.headers, seconds: o.warmUpSeconds });
    const results = sides.map(() => ({ wrk: [] as WrkResult[], cpuUs: [] as number[] }));
    const version = (createRequire(import.meta.url)('maxmind/package.json') as { version: string }).version;
    lines.push(
      '',
      `MMDB peer (issue 35): /v1/ip uniform, ${new Set(o.paths).size} IPs, metered (a real key), the full answer, ` +
        `against the release's MMDB export read by maxmind ${version} behind bare node:http; ` +
        `${o.rounds} rounds of ${o.seconds} s alternating ours, peer; ${o.connections} connections` +
        (o.cpu !== undefined ? `; both servers on CPU ${o.cpu}, wrk on CPU ${o.wrkCpu}` : ''),
      '| Round | ours req/s | peer req/s | Ratio | CPU µs/req ours / peer | p99 ms ours / peer |',
      '|---|---|---|---|---|---|',
    );
    for (let round = 1; round <= o.rounds; round++) {
      for (const [i, s] of sides.entries()) {
        const r = await withCpuPerRequest(s.child.pid!, () =>
          runWrk({ ...common, url: s.url, headers: s.headers, seconds: o.seconds }),
        );
        if (r.result.non2xx > 0 || r.result.errors > 0) {
          throw new Error(`${s.name}: ${r.result.non2xx} non-2xx and ${r.result.errors} socket errors`);
        }
        results[i]!.wrk.push(r.result);
        results[i]!.cpuUs.push(r.cpuUs);
      }
      const [a, b] = [results[0]!, results[1]!];
      lines.push(
        `| ${round} | ${a.wrk[round - 1]!.rps.toFixed(0)} | ${b.wrk[round - 1]!.rps.toFixed(0)} | ` +
          `${(a.wrk[round - 1]!.rps / b.wrk[round - 1]!.rps).toFixed(2)} | ` +
          `${a.cpuUs[round - 1]!.toFixed(1)} / ${b.cpuUs[round - 1]!.toFixed(1)} | ` +
          `${a.wrk[round - 1]!.p99ms.toFixed(2)} / ${b.wrk[round - 1]!.p99ms.toFixed(2)} |`,
      );
    }
    const [a, b] = [results[0]!, results[1]!];
    const ratios = a.wrk.map((x, i) => x.rps / b.wrk[i]!.rps);
    const ratio = summarize(ratios);
    lines.push(
      `| median (min–max) | ${spread(summarize(a.wrk.map((x) => x.rps)))} | ${spread(summarize(b.wrk.map((x) => x.rps)))} | ` +
        `${spread(ratio, 2)} | ${spread(summarize(a.cpuUs), 1)} / ${spread(summarize(b.cpuUs), 1)} | ` +
        `${spread(summarize(a.wrk.map((x) => x.p99ms)), 2)} / ${spread(summarize(b.wrk.map((x) => x.p99ms)), 2)} |`,
      `answer body, mean bytes over the ${new Set(o.paths).size} IPs: ours ${bytes[0]!.toFixed(0)}, peer ${bytes[1]!.toFixed(0)}`,
    );
    const target =
      `- peer ratio ≥ ${PEER_TARGET.toFixed(1)}: ${ratio.median >= PEER_TARGET ? 'met' : 'NOT met'} ` +
      `(median ratio ${ratio.median.toFixed(2)}, runs ${ratios.map((r) => r.toFixed(2)).join(', ')})`;
    return { lines, target };
  } finally {
    await o.stop(peer.child);
    if (o.ours === undefined) await o.stop(own.child);
  }
}
