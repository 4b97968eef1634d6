/**
 * `make verify-gates` (scripts/verify-gates.sh): the feed quality gate on the full real files of
 * ../shared/data. For each feed below, its real files are imported into a fresh state (and fetched
 * from a local mirror for the two IP-to-ASN mappings); then copies truncated to half their bytes,
 * emptied, and without their largest range (test/helpers/feed-variants.ts) must each be refused
 * with the previous snapshot kept, and the truncated copy must be taken with --accept-drop. Prints
 * one line per step and "N as expected, M not"; exits 1 when M > 0. Run `make build` first.
 *
 *   node dist/test/builder/verify-gates-shared.js --data ../shared/data --work var/verify-gates
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import zlib from 'node:zlib';
import { getSource } from '../../builder/sources/index.js';
import { ROOT, runBuilder, startMirror, type BuilderRun } from '../helpers/builder-cli.js';
import { truncatedHalf, withoutLargestRange } from '../helpers/feed-variants.js';

const { values: args } = parseArgs({
  options: {
    data: { type: 'string', default: path.join(ROOT, '../shared/data') },
    work: { type: 'string', default: path.join(ROOT, 'var/verify-gates') },
  },
});

interface Case {
  feed: string;
  /** Paths in the data directory, in the feed's file order. */
  files: string[];
  /** The file (index) and family whose largest range is removed. */
  largest: [number, 4 | 6];
  /** The publisher URLs' host/path on the mirror, for a fetch as well as an import. */
  mirror?: string[];
  /** Why removing the largest range is an ordinary change the gate must take (it is refused otherwise). */
  largestIsOrdinary?: string;
}

const CASES: Case[] = [
  {
    feed: 'iptoasn',
    files: ['iptoasn/ip2asn-v4.subset-google-cloudflare.tsv', 'iptoasn/ip2asn-v6.tsv.gz'],
    largest: [1, 6],
    mirror: ['iptoasn.com/data/ip2asn-v4.tsv.gz', 'iptoasn.com/data/ip2asn-v6.tsv.gz'],
  },
  {
    feed: 'ip-location-db',
    files: ['ip-location-db-asn/asn-ipv4.csv.gz', 'ip-location-db-asn/asn-ipv6.csv.gz'],
    largest: [0, 4],
    mirror: [
      'cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv4.csv',
      'cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv6.csv',
    ],
  },
  { feed: 'cloudflare', files: ['cloudflare/ips-v4.txt', 'cloudflare/ips-v6.txt'], largest: [0, 4] },
  {
    feed: 'apple-private-relay',
    files: ['apple-private-relay/egress-ipv4-cidrs.txt', 'apple-private-relay/egress-ipv6-cidrs-merged.txt'],
    largest: [0, 4],
    largestIsOrdinary: 'its largest IPv4 range is a /24, 0.24% of the 106,589 addresses',
  },
  {
    feed: 'tor-bulk-exit',
    files: ['tor/torbulkexitlist.txt'],
    largest: [0, 4],
    largestIsOrdinary: 'every entry is one address: one exit of 1,396 leaving',
  },
];

let expected = 0;
let unexpected = 0;

function report(ok: boolean, line: string): void {
  if (ok) expected++;
  else unexpected++;
  console.log(`${ok ? 'ok ' : 'NOT'} ${line}`);
}

/** The state's record of the feed's current snapshot (what a refused copy must leave alone). */
function stored(stateDir: string, feed: string): string {
  const db = new Database(path.join(stateDir, 'state.sqlite'), { readonly: true });
  try {
    return JSON.stringify(
      db.prepare(`SELECT files, records FROM source_snapshot WHERE source = ?`).get(feed),
    );
  } finally {
    db.close();
  }
}

/** The first line of the gate's verdict, shortened for the report. */
function verdict(run: BuilderRun): string {
  const line = `${run.stdout}\n${run.stderr}`.split('\n').find((l) => /drops too much|all the same/.test(l));
  return (line ?? run.stdout.split('\n')[0] ?? '').replace(/^.*?(drops too much: |--accept-drop\): )/, '');
}

function variants(c: Case, data: string): Array<[string, Buffer[]]> {
  const texts = c.files.map((f) => {
    const raw = fs.readFileSync(path.join(data, f));
    return f.endsWith('.gz') ? zlib.gunzipSync(raw) : raw;
  });
  const [index, family] = c.largest;
  const largest = withoutLargestRange(getSource(c.feed)!, texts[index]!.toString('utf8'), family);
  console.log(`    ${c.feed}: the largest IPv${family} range of ${c.files[index]}: ${largest.removed}`);
  return [
    ['original', texts],
    ['truncated to 50%', texts.map(truncatedHalf)],
    ['emptied', texts.map(() => Buffer.alloc(0))],
    ['largest range removed', texts.map((t, i) => (i === index ? Buffer.from(largest.text) : t))],
  ];
}

async function verifyImport(c: Case, copies: Array<[string, Buffer[]]>, work: string): Promise<void> {
  const state = path.join(work, c.feed, 'state');
  const put = async (name: string, texts: Buffer[], ...flags: string[]): Promise<BuilderRun> => {
    const dir = path.join(work, c.feed, name.replace(/\W+/g, '-'));
    fs.mkdirSync(dir, { recursive: true });
    const files = texts.map((text, i) => {
      const file = path.join(dir, path.basename(c.files[i]!).replace(/\.gz$/, ''));
      fs.writeFileSync(file, text);
      return file;
    });
    const started = performance.now();
    const run = await runBuilder(['--state-dir', state, 'import', c.feed, ...files, ...flags]);
    console.log(
      `    import ${name}: exit ${run.status} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    return run;
  };
  const original = copies[0]![1];
  const damaged = copies.slice(1);
  const first = await put('original', original);
  report(first.status === 0, `${c.feed} import original: ${first.stdout.split('\n')[0]}${first.stderr}`);
  const before = stored(state, c.feed);
  for (const [name, texts] of damaged) {
    const run = await put(name, texts);
    if (name === 'largest range removed' && c.largestIsOrdinary) {
      const taken = run.status === 0 && stored(state, c.feed) !== before;
      report(taken, `${c.feed} import ${name}: taken (${c.largestIsOrdinary}): ${run.stdout.split('\n')[0]}`);
      continue;
    }
    const kept =
      run.status === 1 && run.stdout.includes('KEPT PREVIOUS SNAPSHOT') && stored(state, c.feed) === before;
    report(kept, `${c.feed} import ${name}: refused, previous kept: ${verdict(run)}`);
  }
  const beforeForced = stored(state, c.feed);
  const forced = await put(damaged[0]![0], damaged[0]![1], '--accept-drop', c.feed);
  const taken = forced.status === 0 && stored(state, c.feed) !== beforeForced;
  report(taken, `${c.feed} import ${damaged[0]![0]} --accept-drop ${c.feed}: taken: ${verdict(forced)}`);
}

async function verifyFetch(c: Case, copies: Array<[string, Buffer[]]>, work: string): Promise<void> {
  const teardowns: Array<() => unknown> = [];
  const mirror = await startMirror({ teardown: (fn) => teardowns.push(fn) });
  const state = path.join(work, c.feed, 'fetch-state');
  const manifest = path.join(state, 'snapshots', c.feed, 'current.json');
  const env = { FEED_MIRROR: mirror.url, FETCH_RETRIES: '0', FETCH_TIMEOUT_MS: '120000' };
  const fetch = async (name: string, texts: Buffer[], ...flags: string[]): Promise<BuilderRun> => {
    texts.forEach((text, i) => {
      const hostPath = c.mirror![i]!;
      mirror.serve(hostPath, hostPath.endsWith('.gz') ? zlib.gzipSync(text) : text);
    });
    const started = performance.now();
    const run = await runBuilder(['--state-dir', state, 'fetch', c.feed, ...flags], env);
    console.log(
      `    fetch ${name}: exit ${run.status} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    return run;
  };
  try {
    const original = copies[0]![1];
    const damaged = copies.slice(1);
    const first = await fetch('original', original);
    report(first.status === 0, `${c.feed} fetch original: ${first.stdout.split('\n')[0]}`);
    const before = fs.readFileSync(manifest, 'utf8');
    for (const [name, texts] of damaged) {
      const run = await fetch(name, texts);
      const kept = run.status === 1 && fs.readFileSync(manifest, 'utf8') === before;
      report(kept, `${c.feed} fetch ${name}: refused, previous kept: ${verdict(run)}`);
    }
    const forced = await fetch(damaged[0]![0], damaged[0]![1], '--accept-drop', c.feed);
    const taken = forced.status === 0 && fs.readFileSync(manifest, 'utf8') !== before;
    report(taken, `${c.feed} fetch ${damaged[0]![0]} --accept-drop ${c.feed}: taken: ${verdict(forced)}`);
  } finally {
    for (const fn of teardowns) await fn();
  }
}

async function main(): Promise<number> {
  const data = path.resolve(args.data!);
  const work = path.resolve(args.work!);
  fs.rmSync(work, { recursive: true, force: true });
  for (const c of CASES) {
    const copies = variants(c, data);
    await verifyImport(c, copies, work);
    if (c.mirror) await verifyFetch(c, copies, work);
  }
  console.log(`verify-gates: ${expected} as expected, ${unexpected} not`);
  return unexpected > 0 ? 1 : 0;
}

process.exitCode = await main();
