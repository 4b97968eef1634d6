/**
 * Bulk enrichment throughput (`make bench-bulk`): IP inputs per second through the real bulk path
 * (line reading, dispatch, lookup, NDJSON and CSV serialisation, chunked output to a sink) against
 * the same lookups (lookupIp on the same addresses) in a plain loop, in the same process and run,
 * rounds interleaved; prints both rates and their ratio. One core: the process is single-threaded.
 *
 *   node dist/test/bench/bench-bulk.js [--releases var/bench/releases] [--count 300000] [--rounds 3]
 */
import { Writable } from 'node:stream';
import path from 'node:path';
import fs from 'node:fs';
import { openRelease, lookupIp, warmLookupIp, type Release } from '../../shared/queries/index.js';
import { enrichLines } from '../../builder/bulk-command.js';
import type { BulkOptions } from '../../builder/bulk.js';
import { currentReleaseFile } from '../../builder/release/publish.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

/** A deterministic PRNG (mulberry32), so runs see the same addresses. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Addresses: half inside mapped routes (asn_range), half random IPv4; one in ten IPv6 in a route. */
export function benchAddresses(release: Release, count: number): string[] {
  const next = random(17);
  const v4 = release.db
    .prepare(`SELECT first_text, last_text FROM asn_range WHERE version = 4 ORDER BY random() LIMIT 20000`)
    .raw()
    .all() as Array<[string, string]>;
  const v6 = release.db
    .prepare(`SELECT first_text FROM asn_range WHERE version = 6 ORDER BY random() LIMIT 20000`)
    .pluck()
    .all() as string[];
  const toNum = (t: string) => t.split('.').reduce((n, o) => n * 256 + Number(o), 0);
  const toText = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = next();
    if (r < 0.1 && v6.length > 0) {
      const base = v6[Math.floor(next() * v6.length)]!;
      out.push(base.endsWith('::') ? `${base}${Math.floor(next() * 65535).toString(16)}` : base);
    } else if (r < 0.55 && v4.length > 0) {
      const [first, last] = v4[Math.floor(next() * v4.length)]!;
      const a = toNum(first);
      out.push(toText(a + Math.floor(next() * (toNum(last) - a + 1))));
    } else out.push(toText(Math.floor(next() * 0xe0000000)));
  }
  return out;
}

class Sink extends Writable {
  bytes = 0;
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    this.bytes += chunk.length;
    done();
  }
}

async function* chunksOf(text: string): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text);
  for (let at = 0; at < bytes.length; at += 1 << 20) yield bytes.subarray(at, at + (1 << 20));
}

async function main(): Promise<void> {
  const releasesDir = arg('releases', 'var/bench/releases');
  const count = Number(arg('count', '300000'));
  const rounds = Number(arg('rounds', '3'));
  const file = fs.existsSync(path.join(releasesDir, 'CURRENT')) ? currentReleaseFile(releasesDir) : null;
  if (!file) throw new Error(`no release in ${releasesDir} (make bench-build)`);
  const release = openRelease(file);
  await warmLookupIp(release);
  const inputs = benchAddresses(release, count);
  const text = `${inputs.join('\n')}\n`;
  const csv: BulkOptions = {
    format: 'csv',
    fields: ['asn.asn', 'asn.descr', 'provider', 'is_datacenter', 'provider_ranges[].category'],
    domains: 'hosting',
  };
  const ndjson: BulkOptions = { format: 'ndjson', fields: null, domains: 'hosting' };
  const lean: BulkOptions = { ...ndjson, blocks: false };
  const best = { loop: 0, ndjson: 0, lean: 0, csv: 0 };
  const cpuBest = { loop: 0, ndjson: 0, lean: 0, csv: 0 };
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  let bytes = 0;
  for (let round = 0; round < rounds; round++) {
    let started = process.hrtime.bigint();
    let cpuStarted = cpu();
    let answered = 0;
    for (const ip of inputs) if (lookupIp(release, { ip })) answered++;
    const loop = count / (Number(process.hrtime.bigint() - started) / 1e9);
    cpuBest.loop = Math.max(cpuBest.loop, count / (cpu() - cpuStarted));
    if (answered !== count) throw new Error('loop: not every lookup answered');
    for (const [name, options] of [
      ['ndjson', ndjson],
      ['lean', lean],
      ['csv', csv],
    ] as const) {
      const sink = new Sink();
      started = process.hrtime.bigint();
      cpuStarted = cpu();
      const result = await enrichLines(release, chunksOf(text), sink, options);
      const rate = count / (Number(process.hrtime.bigint() - started) / 1e9);
      if (result.inputs !== count || result.failed !== 0)
        throw new Error(`${name}: ${JSON.stringify(result)}`);
      best[name] = Math.max(best[name], rate);
      cpuBest[name] = Math.max(cpuBest[name], count / (cpu() - cpuStarted));
      if (name === 'ndjson') bytes = sink.bytes;
    }
    best.loop = Math.max(best.loop, loop);
    console.log(`round ${round + 1}: loop ${Math.round(loop)}/s`);
  }
  const line = (label: string, name: keyof typeof best, extra = '') =>
    console.log(
      `${label.padEnd(28)} ${String(Math.round(cpuBest[name])).padStart(8)} IPs/s per CPU second ` +
        `(ratio ${(cpuBest[name] / cpuBest.loop).toFixed(2)}), ${Math.round(best[name])} IPs/s wall${extra}`,
    );
  console.log(`release ${release.id}: ${count} IP inputs, ${rounds} rounds, best of each, one thread`);
  line('lookupIp in a loop', 'loop');
  line('bulk NDJSON (full answers)', 'ndjson', `, ${Math.round(bytes / count)} bytes/line`);
  line('bulk NDJSON --no-blocks', 'lean');
  line('bulk CSV (5 fields)', 'csv');
  release.close();
}

await main();
