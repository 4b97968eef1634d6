/**
 * µs per in-process call of the lookups with and without as_of (issue 33), ranges in memory: the
 * same samples as bench-api (IPs of ip_summary, seed domains, routed ASes), at bench-api's moment
 * (an hour after the middle epoch was built) or --at. Plain and as-of runs alternate; prints the
 * median and spread over --runs.
 *
 *   node dist/test/bench/bench-as-of-calls.js --release /work/benchasof/releases/<id>.sqlite [--runs 7]
 *
 * --only <name> --calls N: that query only, N calls, no timing (for valgrind --tool=callgrind:
 * instructions per call = the difference of two call counts' totals over the difference of counts).
 */
import fs from 'node:fs';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import {
  domainHistory,
  domainHistoryAsOf,
  lookupAsn,
  lookupAsnAsOf,
  lookupIp,
  lookupIpAsOf,
  openRelease,
  warmLookupIp,
} from '../../shared/queries/index.js';
import { epochIndexStats, sqlOnly, warmAsOf } from '../../shared/queries/as-of/epoch-index.js';
import { spread, summarize } from './wrk.js';

const { values } = parseArgs({
  options: {
    release: { type: 'string' },
    runs: { type: 'string', default: '7' },
    sample: { type: 'string', default: '5000' },
    at: { type: 'string' },
    only: { type: 'string' },
    calls: { type: 'string', default: '1000' },
    /** No in-memory as-of index (the SQL path), for a before/after in one build. */
    'no-index': { type: 'boolean', default: false },
    /** With --only: a CPU profile of the calls alone (not the loading) written to this file. */
    profile: { type: 'string' },
  },
});
if (values.release === undefined) throw new Error('--release <file>');
const release = openRelease(values.release);
const sampleSize = Number(values.sample);
const builtAt = release.db.prepare(`SELECT built_at FROM epoch ORDER BY epoch`).pluck().all() as number[];
const at = values.at ?? new Date((builtAt[Math.floor(builtAt.length / 2)]! + 3600) * 1000).toISOString();
const now = Math.floor(Date.now() / 1000);

/** Every k-th row, so the sample spreads over the table. */
function spreadSample<T>(rows: T[]): T[] {
  const step = Math.max(1, Math.floor(rows.length / sampleSize));
  return rows.filter((_, i) => i % step === 0).slice(0, sampleSize);
}
const ips = spreadSample(release.db.prepare(`SELECT value FROM ip_summary`).pluck().all() as string[]);
const domains = spreadSample(
  release.db.prepare(`SELECT name FROM domain WHERE in_seed = 1`).pluck().all() as string[],
);
const asns = spreadSample(
  release.db.prepare(`SELECT asn FROM asn WHERE routes_v4 + routes_v6 > 0`).pluck().all() as number[],
).map(String);

const queries: Record<string, () => void> = {
  lookupIp: () => ips.forEach((ip) => lookupIp(release, { ip })),
  lookupIpAsOf: () => ips.forEach((ip) => lookupIpAsOf(release, { ip }, at, now)),
  domainHistory: () => domains.forEach((domain) => domainHistory(release, { domain, limit: 100 })),
  domainHistoryAsOf: () =>
    domains.forEach((domain) => domainHistoryAsOf(release, { domain, limit: 100 }, at, now)),
  lookupAsn: () => asns.forEach((asn) => lookupAsn(release, { asn, limit: 100 })),
  lookupAsnAsOf: () => asns.forEach((asn) => lookupAsnAsOf(release, { asn, limit: 100 }, at, now)),
  lookupAsn13335: () => {
    for (let i = 0; i < 200; i++) lookupAsn(release, { asn: '13335', limit: 100 });
  },
  lookupAsn13335AsOf: () => {
    for (let i = 0; i < 200; i++) lookupAsnAsOf(release, { asn: '13335', limit: 100 }, at, now);
  },
};
const callsOf = (name: string) =>
  name.startsWith('lookupIp')
    ? ips.length
    : name.startsWith('domain')
      ? domains.length
      : name.includes('13335')
        ? 200
        : asns.length;

async function main(): Promise<void> {
  await warmLookupIp(release);
  if (values['no-index']) sqlOnly(release);
  else {
    const t0 = Date.now();
    await warmAsOf(release, at, now);
    const s = epochIndexStats(release);
    console.log(
      `epoch index built in ${Date.now() - t0} ms: ${s.bytes.join(', ')} bytes, shared words ${s.wordsBytes} bytes`,
    );
  }
  if (values.only !== undefined) {
    const run = queries[values.only];
    if (!run) throw new Error(`--only: one of ${Object.keys(queries).join(', ')}`);
    const calls = Number(values.calls);
    const per = callsOf(values.only);
    const session = values.profile === undefined ? null : new Session();
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    for (let done = 0; done < calls; done += per) run();
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      fs.writeFileSync(values.profile!, JSON.stringify(profile));
    }
    return;
  }
  console.log(
    `release ${release.id}, as_of ${at}, ${ips.length} IPs, ${domains.length} domains, ${asns.length} ASes`,
  );
  const names = Object.keys(queries);
  for (const name of names) queries[name]!(); // warm-up: caches and JIT
  const wall = new Map<string, number[]>(names.map((n) => [n, []]));
  const cpu = new Map<string, number[]>(names.map((n) => [n, []]));
  for (let r = 0; r < Number(values.runs); r++) {
    for (const name of names) {
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      queries[name]!();
      const us = Number(process.hrtime.bigint() - t0) / 1000 / callsOf(name);
      const c = process.cpuUsage(c0);
      wall.get(name)!.push(us);
      cpu.get(name)!.push((c.user + c.system) / callsOf(name));
    }
  }
  // CPU time (this process on a core) depends less on the machine's load than wall time.
  console.log('| query | CPU µs per call, median (min–max) | wall µs per call, median (min–max) |');
  console.log('|---|---|---|');
  for (const name of names)
    console.log(
      `| ${name} | ${spread(summarize(cpu.get(name)!), 2)} | ${spread(summarize(wall.get(name)!), 2)} |`,
    );
}

await main();
