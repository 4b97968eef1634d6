/**
 * `make bench-collect`: serves a generated zone set (N domains, 2N names with A and AAAA) from
 * Knot on loopback, measures dnsperf against it (the baseline, same run, same server), then runs
 * one full collection round through the real CLI (`builder collect`, a process of its own) and
 * prints queries/s, the ratio to dnsperf, the timeout share, the outcomes against the zones and
 * the wall time of the whole round (state written). Targets: ratio ≥ 0.40, timeouts < 0.1%,
 * round < 240 s for 1,000,000 domains.
 *
 *   node dist/test/bench/bench-collect.js --domains 1000000 [--dir var/bench-collect] [--in-flight 256]
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateBenchZones } from './generate-zones.js';
import { soaSerial, startKnot } from '../helpers/knot.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const builder = path.join(root, 'bin/builder.js');

const { values } = parseArgs({
  options: {
    domains: { type: 'string', default: process.env.DOMAINS ?? '1000000' },
    zones: { type: 'string', default: '16' },
    dir: { type: 'string', default: path.join(root, 'var/bench-collect') },
    'in-flight': { type: 'string', default: process.env.IN_FLIGHT ?? '256' },
    'dnsperf-seconds': { type: 'string', default: '20' },
    'dnsperf-in-flight': { type: 'string', default: '100' },
  },
});
const domains = Number(values.domains);
const dir = path.resolve(values.dir);
const inFlight = Number(values['in-flight']);

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

async function main(): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const zoneDir = path.join(dir, `zones-${domains}`);
  let started = performance.now();
  fs.rmSync(zoneDir, { recursive: true, force: true });
  const zones = generateBenchZones(domains, Number(values.zones), zoneDir);
  console.log(
    `zones: ${fmt(domains)} domains in ${zones.origins.length} zones, generated in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  started = performance.now();
  const knot = await startKnot({}, { zoneDir, udpWorkers: 1, readyTimeoutMs: 900_000 });
  try {
    for (const origin of zones.origins) {
      while ((await soaSerial(knot.host, knot.port, origin, 1000)) === null)
        await new Promise((r) => setTimeout(r, 200));
    }
    console.log(
      `knot: serving on ${knot.host}:${knot.port} (1 UDP worker), loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );

    // Baseline: dnsperf, 100 in flight, over the same names.
    const queryFile = path.join(dir, 'dnsperf-queries.txt');
    const sample = zones.domains.slice(0, 250_000);
    fs.writeFileSync(
      queryFile,
      sample.flatMap((d) => [`${d} A`, `${d} AAAA`, `www.${d} A`, `www.${d} AAAA`]).join('\n') + '\n',
    );
    const perf = spawnSync(
      'dnsperf',
      [
        '-s',
        knot.host,
        '-p',
        String(knot.port),
        '-d',
        queryFile,
        '-l',
        values['dnsperf-seconds'],
        '-c',
        '1',
        '-T',
        '1',
        '-q',
        values['dnsperf-in-flight'],
      ],
      { encoding: 'utf8' },
    );
    if (perf.status !== 0) throw new Error(`dnsperf failed: ${perf.stdout}${perf.stderr}`);
    const dnsperfQps = Number(/Queries per second:\s+([\d.]+)/.exec(perf.stdout)?.[1]);
    const lost = /Queries lost:\s+(\d+)/.exec(perf.stdout)?.[1];
    console.log(
      `dnsperf: ${fmt(dnsperfQps)} q/s (${values['dnsperf-in-flight']} in flight, ${values['dnsperf-seconds']} s, ${lost} lost)`,
    );

    // A fresh state with the seed list.
    const stateDir = path.join(dir, 'state');
    fs.rmSync(stateDir, { recursive: true, force: true });
    const seedFile = path.join(dir, 'seed.csv');
    fs.writeFileSync(seedFile, zones.domains.map((d, i) => `${i + 1},${d}`).join('\n') + '\n');
    const seed = spawnSync(
      process.execPath,
      [builder, '--state-dir', stateDir, 'import', 'tranco', seedFile],
      { encoding: 'utf8' },
    );
    if (seed.status !== 0) throw new Error(`seed import failed: ${seed.stdout}${seed.stderr}`);

    // One full round through the CLI.
    started = performance.now();
    // COLLECT_NODE_ARGS: node options for the collector process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p"
    // (NODE_OPTIONS refuses --cpu-prof).
    const nodeArgs = (process.env.COLLECT_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
    const args = [
      ...nodeArgs,
      builder,
      '--state-dir',
      stateDir,
      'collect',
      '--resolver',
      `${knot.host}:${knot.port}`,
      '--max-qps',
      '0',
      '--max-in-flight',
      String(inFlight),
      '--timeout',
      '1000',
      '--retries',
      '2',
      '--ptr-share',
      '0',
    ];
    const child = spawn(process.execPath, args, { env: { ...process.env, BUILDER_REPORT_RUSAGE: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      process.stdout.write(c);
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
      process.stderr.write(c);
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    const wall = (performance.now() - started) / 1000;
    if (code !== 0) throw new Error(`collect failed (${code})`);
    const m = /asked ([\d,]+) in ([\d.]+) s \(([\d,]+) q\/s\)/.exec(stdout);
    const asked = Number(m?.[1]?.replace(/,/g, ''));
    const collectorQps = Number(m?.[3]?.replace(/,/g, ''));
    const outcome = (name: string) =>
      Number(new RegExp(`outcomes: .*?${name} ([\\d,]+)`).exec(stdout)?.[1]?.replace(/,/g, ''));
    const timeouts = outcome('timeout');
    const rss = /rusage: maxrss_kb=(\d+)/.exec(stderr);
    const ratio = collectorQps / dnsperfQps;
    console.log('');
    console.log(`bench-collect: ${fmt(domains)} domains, ${fmt(asked)} queries, ${inFlight} in flight`);
    console.log(`  dnsperf baseline      ${fmt(dnsperfQps)} q/s`);
    console.log(
      `  collector             ${fmt(collectorQps)} q/s = ${(ratio * 100).toFixed(1)}% of dnsperf (target ≥ 60%, issue 35: ${ratio >= 0.6 ? 'met' : 'NOT met'})`,
    );
    console.log(
      `  timeouts              ${fmt(timeouts)} = ${((timeouts / asked) * 100).toFixed(3)}% (target < 0.1%)`,
    );
    console.log(
      `  outcomes              positive ${fmt(outcome('positive'))} (zones: ${fmt(zones.expected.positive)}), ` +
        `nodata ${fmt(outcome('nodata'))} (${fmt(zones.expected.nodata)}), nxdomain ${fmt(outcome('nxdomain'))} (${fmt(zones.expected.nxdomain)})`,
    );
    console.log(
      `  whole round           ${wall.toFixed(1)} s, state written (target < 240 s for 1,000,000 domains)`,
    );
    console.log(`  collector peak RSS    ${rss ? fmt(Number(rss[1]) / 1024) : '?'} MB`);
  } finally {
    await knot.stop();
  }
}

await main();
