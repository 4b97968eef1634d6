/**
 * The MMDB peer section of `make bench-api` (issue 35): `/v1/ip` uniform, metered with a real key
 * and the full answer, against the server a user who only needs IP → network would run instead:
 * the same release exported with `builder export mmdb`, read by the npm `maxmind` reader behind
 * bare node:http (mmdb-peer-server.ts), on the same addresses: uniform random public IPv4
 * addresses, as issue 35 measured it (public-addresses.ts). One core each (the same one, taking
 * turns), wrk on the other; the runs alternate (ours, peer, floor, ours, …), so that a machine that
 * slows down or speeds up during the section weighs on all alike. The floor is the bare node:http
 * server of the REST section (bare-http-server.ts) sending the exact bytes ours sent for the first
 * FLOOR_SAMPLE addresses: what any server answering through node:http with our answers could
 * reach, lookups and metering aside. The raw side (raw-net-server.ts) sends the same bytes from a
 * plain `net` server with no HTTP layer to speak of: the floor's distance to it is what node:http
 * itself costs per request. Prints req/s, CPU µs per request and p99 per run, the answers' mean
 * sizes, and the target: ours at least the peer's req/s.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import maxmind from 'maxmind';
import { request } from 'undici';
import fs from 'node:fs';
import { currentReleaseFile } from '../../builder/release/publish.js';
import { openRelease } from '../../shared/queries/index.js';
import { settled, withCpuPerRequest, type ServerBenchOptions } from './processes.js';
import { randomPublicIpv4 } from './public-addresses.js';
import { runWrk, spread, summarize, type WrkResult } from './wrk.js';
import { BARE_SERVER, capturedLine } from './captured.js';

/** The compiled peer server, beside this module. */
export const PEER_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'mmdb-peer-server.js');
/** The compiled raw `net` responder, beside this module. */
const RAW_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'raw-net-server.js');

/** Issue 35: /v1/ip uniform answers at least the peer's req/s (median of the rounds' ratios). */
export const PEER_TARGET = 1.0;

export interface PeerBenchOptions extends ServerBenchOptions {
  root: string;
  /** Rounds: one run of ours, then one of the peer, each. */
  rounds: number;
  /** How many uniform random public IPv4 addresses both servers are asked (public-addresses.ts). */
  addresses: number;
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

/** Addresses whose answers give the peer's mean body size (the first ones of the list). */
const SIZE_SAMPLE = 5_000;

/** Addresses whose answers from ours the floor server replays (the first ones of the list). */
const FLOOR_SAMPLE = 20_000;

/** Each of `paths` asked once, 16 at a time, each answer handed to `each`; fails on a non-200. */
async function askEach(
  base: string,
  paths: string[],
  headers: Record<string, string>,
  each: (i: number, headers: Record<string, string | string[] | undefined>, body: string) => void,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < paths.length) {
        const i = next++;
        const r = await request(base + paths[i]!, { headers });
        const body = await r.body.text();
        if (r.statusCode !== 200)
          throw new Error(`${base}${paths[i]}: ${r.statusCode} ${body.slice(0, 300)}`);
        each(i, r.headers, body);
      }
    }),
  );
}

/** Mean body bytes of the answers to `paths` (distinct ones, each asked once). */
async function meanBodyBytes(
  base: string,
  paths: string[],
  headers: Record<string, string>,
): Promise<number> {
  const unique = [...new Set(paths)];
  let total = 0;
  await askEach(base, unique, headers, (_i, _headers, body) => (total += Buffer.byteLength(body)));
  return total / unique.length;
}

/** Our answers to `paths` as the bare server's file (captured.ts); returns their mean body size. */
async function captureOurs(
  base: string,
  paths: string[],
  headers: Record<string, string>,
  file: string,
): Promise<number> {
  const lines = new Array<string>(paths.length);
  let total = 0;
  await askEach(base, paths, headers, (i, sent, body) => {
    total += Buffer.byteLength(body);
    lines[i] = capturedLine('GET', paths[i]!, 200, sent, body);
  });
  fs.writeFileSync(file, lines.join(''));
  return total / paths.length;
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
  let floor: Awaited<ReturnType<PeerBenchOptions['startProcess']>> | undefined;
  let raw: Awaited<ReturnType<PeerBenchOptions['startProcess']>> | undefined;
  try {
    await settled(own.child.pid!);
    await settled(peer.child.pid!);
    const paths = randomPublicIpv4(o.addresses).map((ip) => `/v1/ip/${ip}`);
    const floorPaths = paths.slice(0, FLOOR_SAMPLE);
    const captured = path.join(o.work, 'peer-floor.ndjson');
    const ourBytes = await captureOurs(`http://127.0.0.1:${own.port}`, floorPaths, headers, captured);
    floor = await o.startProcess([BARE_SERVER, captured], o.cpu);
    raw = await o.startProcess([RAW_SERVER, captured], o.cpu);
    const sides = [
      { name: 'ours', child: own.child, url: `http://127.0.0.1:${own.port}`, headers, paths },
      { name: 'peer', child: peer.child, url: `http://127.0.0.1:${peer.port}`, headers: {}, paths },
      {
        name: 'floor',
        child: floor.child,
        url: `http://127.0.0.1:${floor.port}`,
        headers,
        paths: floorPaths,
      },
      { name: 'raw', child: raw.child, url: `http://127.0.0.1:${raw.port}`, headers, paths: floorPaths },
    ];
    const peerBytes = await meanBodyBytes(sides[1]!.url, paths.slice(0, SIZE_SAMPLE), {});
    const common = { connections: o.connections, cpu: o.wrkCpu };
    for (const s of sides)
      await runWrk({ ...common, url: s.url, headers: s.headers, paths: s.paths, seconds: o.warmUpSeconds });
    const results = sides.map(() => ({ wrk: [] as WrkResult[], cpuUs: [] as number[] }));
    const version = (createRequire(import.meta.url)('maxmind/package.json') as { version: string }).version;
    lines.push(
      '',
      `MMDB peer (issue 35): /v1/ip on ${paths.length} uniform random public IPv4 addresses, metered (a real key), the full answer, ` +
        `against the release's MMDB export read by maxmind ${version} behind bare node:http; ` +
        `${o.rounds} rounds of ${o.seconds} s alternating ours, peer, floor, raw; ${o.connections} connections` +
        (o.cpu !== undefined ? `; the servers on CPU ${o.cpu}, wrk on CPU ${o.wrkCpu}` : '') +
        `. Floor: bare node:http sending our exact answers (status, headers, body) to the first ${floorPaths.length} addresses; ` +
        'raw: a plain net server (no HTTP layer) sending the same bytes',
      '| Round | ours req/s | peer req/s | Ratio | floor req/s | Floor / peer | raw req/s | Raw / peer | CPU µs/req ours / peer / floor / raw | p99 ms ours / peer / floor / raw |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (let round = 1; round <= o.rounds; round++) {
      for (const [i, s] of sides.entries()) {
        const r = await withCpuPerRequest(s.child.pid!, () =>
          runWrk({ ...common, url: s.url, headers: s.headers, paths: s.paths, seconds: o.seconds }),
        );
        if (r.result.non2xx > 0 || r.result.errors > 0) {
          throw new Error(`${s.name}: ${r.result.non2xx} non-2xx and ${r.result.errors} socket errors`);
        }
        results[i]!.wrk.push(r.result);
        results[i]!.cpuUs.push(r.cpuUs);
      }
      const [a, b, f, w] = [results[0]!, results[1]!, results[2]!, results[3]!];
      const k = round - 1;
      lines.push(
        `| ${round} | ${a.wrk[k]!.rps.toFixed(0)} | ${b.wrk[k]!.rps.toFixed(0)} | ` +
          `${(a.wrk[k]!.rps / b.wrk[k]!.rps).toFixed(2)} | ${f.wrk[k]!.rps.toFixed(0)} | ` +
          `${(f.wrk[k]!.rps / b.wrk[k]!.rps).toFixed(2)} | ${w.wrk[k]!.rps.toFixed(0)} | ` +
          `${(w.wrk[k]!.rps / b.wrk[k]!.rps).toFixed(2)} | ` +
          `${[a, b, f, w].map((x) => x.cpuUs[k]!.toFixed(1)).join(' / ')} | ` +
          `${[a, b, f, w].map((x) => x.wrk[k]!.p99ms.toFixed(2)).join(' / ')} |`,
      );
    }
    const [a, b, f, w] = [results[0]!, results[1]!, results[2]!, results[3]!];
    const ratios = a.wrk.map((x, i) => x.rps / b.wrk[i]!.rps);
    const ratio = summarize(ratios);
    const floorRatio = summarize(f.wrk.map((x, i) => x.rps / b.wrk[i]!.rps));
    const rawRatio = summarize(w.wrk.map((x, i) => x.rps / b.wrk[i]!.rps));
    const rps = (r: typeof a) => spread(summarize(r.wrk.map((x) => x.rps)));
    const cpu = (r: typeof a) => spread(summarize(r.cpuUs), 1);
    const p99 = (r: typeof a) => spread(summarize(r.wrk.map((x) => x.p99ms)), 2);
    lines.push(
      `| median (min–max) | ${rps(a)} | ${rps(b)} | ${spread(ratio, 2)} | ${rps(f)} | ${spread(floorRatio, 2)} | ` +
        `${rps(w)} | ${spread(rawRatio, 2)} | ${[a, b, f, w].map(cpu).join(' / ')} | ${[a, b, f, w].map(p99).join(' / ')} |`,
      `answer body, mean bytes: ours ${ourBytes.toFixed(0)} (the first ${floorPaths.length} addresses, the floor's), ` +
        `peer ${peerBytes.toFixed(0)} (the first ${Math.min(SIZE_SAMPLE, paths.length)})`,
      `floor: bare node:http sending our answers reaches ${floorRatio.median.toFixed(2)} of the peer (median of the rounds); ` +
        `raw: a plain net server sending them, ${rawRatio.median.toFixed(2)}`,
    );
    const target =
      `- peer ratio ≥ ${PEER_TARGET.toFixed(1)}: ${ratio.median >= PEER_TARGET ? 'met' : 'NOT met'} ` +
      `(median ratio ${ratio.median.toFixed(2)}, runs ${ratios.map((r) => r.toFixed(2)).join(', ')}; ` +
      `bare node:http sending our answers: ${floorRatio.median.toFixed(2)}; a plain net server: ${rawRatio.median.toFixed(2)})`;
    return { lines, target };
  } finally {
    if (raw !== undefined) await o.stop(raw.child);
    if (floor !== undefined) await o.stop(floor.child);
    await o.stop(peer.child);
    if (o.ours === undefined) await o.stop(own.child);
  }
}
