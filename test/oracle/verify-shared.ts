/**
 * `make verify-shared` (scripts/verify-shared.sh imports all of ../shared/data and builds the
 * release, then runs this): serves the release, asks GET /v1/ip/{ip} for a seeded draw of
 * addresses (50,000 by default) and compares every answer with the independent oracle computed
 * from the raw files. Prints "N agree, M differ", the differences by field and up to 20 examples;
 * exits 1 when M > 0.
 *
 *   node dist/test/oracle/verify-shared.js --data ../shared/data --releases var/verify-shared/releases \
 *     --work var/verify-shared --import-start 2026-01-01T00:00:00Z --import-end 2026-01-01T00:01:00Z \
 *     [--count 50000] [--seed 13] [--examples 20] [--json differences.json]
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { askService, byField, compare, drawQueries, formatDifference, type Difference } from './harness.js';
import { DEFAULT_ASN_MAPPING, Oracle, readManifest } from './oracle.js';
import { ROOT, startService } from './service.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
    releases: { type: 'string' },
    work: { type: 'string' },
    'import-start': { type: 'string' },
    'import-end': { type: 'string' },
    count: { type: 'string', default: '50000' },
    seed: { type: 'string', default: '13' },
    examples: { type: 'string', default: '20' },
    /** Writes every difference to this file as JSON (one object per difference). */
    json: { type: 'string' },
  },
});

function need(name: string, value: string | undefined): string {
  if (!value) throw new Error(`verify-shared: --${name} is required`);
  return value;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

async function main(): Promise<number> {
  const data = path.resolve(args.data!);
  const releasesDir = path.resolve(need('releases', args.releases));
  const work = path.resolve(need('work', args.work));
  const importWindow = {
    start: need('import-start', args['import-start']),
    end: need('import-end', args['import-end']),
  };
  const count = Number(args.count);
  const asnMapping = process.env.ASN_MAPPING ? process.env.ASN_MAPPING.split(',') : DEFAULT_ASN_MAPPING;
  const manifest = readManifest(
    fs.readFileSync(path.join(ROOT, 'test/bench/shared-data-imports.txt'), 'utf8'),
    data,
  );

  const service = await startService(releasesDir, work);
  try {
    let builtAt: string | null = null;
    for (let i = 0; i < 300 && !builtAt; i += 1) {
      const probe = await askService(service.url, service.key, ['8.8.8.8']);
      const answer = probe.get('8.8.8.8')!;
      if (answer.status === 200) builtAt = (answer.body!.release as { built_at: string }).built_at;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!builtAt) throw new Error(`the server never loaded a release from ${releasesDir}`);

    let started = Date.now();
    // IANA's IPv6 Address Space registry is not in ../shared/data: the fixtures' copies are used.
    const ianaDir = path.join(ROOT, 'test/fixtures/oracle/iana');
    const oracle = new Oracle({ manifest, builtAt, asnMapping, importWindow, ianaDir });
    console.log(
      `oracle: ${oracle.rows.length} mapping rows (${oracle.sourceRank.join(' > ')}), ${oracle.ranges.length} served ranges of ${oracle.parsedRanges.length}, ${oracle.bogons.length} bogon entries, read in ${seconds(Date.now() - started)}`,
    );
    started = Date.now();
    const queries = drawQueries(oracle, {
      seed: Number(args.seed),
      rangesPerFeed: 350,
      rowsPerSource: 300,
      nestedRows: 300,
      randomV4: 4000,
      randomV6: 4000,
      respelled: 800,
      total: count,
    });
    const expected = oracle.expectAll(queries, 'sweep');
    console.log(`oracle: ${queries.length} addresses drawn and answered in ${seconds(Date.now() - started)}`);
    started = Date.now();
    const answers = await askService(service.url, service.key, queries, 8, (done) => {
      if (process.stdout.isTTY) process.stdout.write(`service: ${done} answered\r`);
    });
    console.log(`service: ${answers.size} answers in ${seconds(Date.now() - started)}`);

    const diffs = queries.flatMap((q) => compare(expected.get(q)!, answers.get(q)!, importWindow));
    const differing = new Set(diffs.map((d) => d.query));
    if (args.json) {
      const show = (v: unknown) => (typeof v === 'bigint' ? v.toString() : v);
      fs.writeFileSync(
        args.json,
        JSON.stringify(diffs, (_k, v: unknown) => show(v), 1),
      );
    }
    const groups = byField(diffs);
    if (groups.size > 0) {
      console.log('\ndifferences by field (addresses):');
      for (const [field, list] of groups)
        console.log(`  ${field}: ${new Set(list.map((d) => d.query)).size}`);
      // Examples taken in turn from every field, so that each kind of difference shows.
      const limit = Number(args.examples);
      const examples: Difference[] = [];
      const queues = [...groups.values()].map((list) => [...list]);
      while (examples.length < limit && queues.some((q) => q.length > 0)) {
        for (const queue of queues)
          if (queue.length > 0 && examples.length < limit) examples.push(queue.shift()!);
      }
      console.log(`\n${examples.length} examples (address, field, service value, oracle value):`);
      for (const d of examples) console.log(formatDifference(d));
    }
    console.log(`\n${queries.length - differing.size} agree, ${differing.size} differ`);
    return differing.size > 0 ? 1 : 0;
  } finally {
    await service.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exit(2);
  },
);
