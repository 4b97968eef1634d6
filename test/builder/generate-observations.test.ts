import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import t from 'tap';

import { buildDemoData } from '../../demo/generator/demo-data.js';
import { DEMO_DOMAINS } from '../../demo/generator/domains.js';
import { DEMO_ROUNDS } from '../../demo/generator/answers.js';
import { canonicalIp, parseCidr, parseIp } from '../../shared/ip.js';
import { OUTCOMES, RECORD_TYPES } from '../../shared/vocabulary.js';
import { generateObservations } from '../bench/generate-observations.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE_FEEDS = join(ROOT, 'test', 'fixtures', 'feeds');
const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
const FIELDS = ['name', 'type', 'time', 'outcome', 'values', 'cnames'];

async function sha256(path: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(path))
    .digest('hex');
}

const tempDirs: string[] = [];
t.teardown(() => Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true }))));

/** 50 domains, 2 rounds, addresses from the committed fixture excerpts only. */
async function generateInto(seed: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ipscope-generate-'));
  tempDirs.push(dir);
  await generateObservations({ domains: 50, rounds: 2, outDir: dir, seed, feedDirs: [FIXTURE_FEEDS] });
  return dir;
}

interface Line {
  name: string;
  type: string;
  time: string;
  outcome: string;
  values: string[];
  cnames: string[];
  ttl?: number;
}

t.test('generateObservations: 50 domains, 2 rounds', async (t) => {
  const dir = await generateInto(42);

  const seedLines = (await readFile(join(dir, 'seed.csv'), 'utf8')).split('\n');
  t.equal(seedLines.pop(), '', 'seed.csv ends with a newline');
  t.equal(seedLines.length, 50, '50 seed lines');
  const domains = seedLines.map((line, i) => {
    const [rank, domain, ...rest] = line.split(',');
    t.equal(rank, String(i + 1), `rank of line ${i + 1}`);
    t.equal(rest.length, 0, 'two columns');
    t.match(domain, HOSTNAME, `${domain} is a valid hostname`);
    return domain!;
  });
  t.equal(new Set(domains).size, 50, 'seed domains are unique');
  const names = new Set(domains.flatMap((d) => [d, `www.${d}`]));

  const cloudflare = (await readFile(join(FIXTURE_FEEDS, 'cloudflare', 'ips-v4.txt'), 'utf8'))
    .split('\n')
    .map((text) => parseCidr(text.trim()))
    .filter((c) => c !== null);
  let inCloudflare = 0;

  for (const round of [1, 2]) {
    const text = await readFile(join(dir, `round-${round}.ndjson`), 'utf8');
    const rows = text.split('\n');
    t.equal(rows.pop(), '', `round ${round} ends with a newline`);
    t.equal(rows.length, 4 * 50, `round ${round} has 4 x 50 lines`);
    const seen = new Set<string>();
    const lastTime = new Map<string, string>();
    let bad = 0;
    for (const row of rows) {
      const line = JSON.parse(row) as Line;
      const keys = Object.keys(line);
      if (keys.slice(0, 6).join() !== FIELDS.join() || keys.some((k) => !FIELDS.includes(k) && k !== 'ttl'))
        bad++;
      if (line.ttl !== undefined && !Number.isInteger(line.ttl)) bad++;
      if (!names.has(line.name)) bad++;
      if (!(RECORD_TYPES as readonly string[]).includes(line.type)) bad++;
      if (!(OUTCOMES as readonly string[]).includes(line.outcome)) bad++;
      if (!/^2026-10-0[12]T\d\d:\d\d:\d\dZ$/.test(line.time) || !line.time.startsWith(`2026-10-0${round}`))
        bad++;
      if (!Array.isArray(line.values) || !Array.isArray(line.cnames)) bad++;
      if ((line.outcome === 'positive') !== line.values.length > 0) bad++;
      for (const value of line.values) {
        const parsed = parseIp(value);
        if (!parsed || canonicalIp(value) !== value) bad++;
        if (parsed && (parsed.version === 4) !== (line.type === 'A')) bad++;
        if (
          parsed &&
          cloudflare.some(
            (c) => c.version === parsed.version && parsed.value >= c.first && parsed.value <= c.last,
          )
        ) {
          inCloudflare++;
        }
      }
      for (const cname of line.cnames) if (!HOSTNAME.test(cname)) bad++;
      const key = `${line.name}/${line.type}`;
      if (seen.has(key)) bad++;
      seen.add(key);
      const previous = lastTime.get(line.name);
      if (previous !== undefined && previous > line.time) bad++;
      lastTime.set(line.name, line.time);
    }
    t.equal(bad, 0, `every line of round ${round} has the six fields with valid values`);
    t.equal(seen.size, 4 * 50, `round ${round} has one line per (name, type)`);
  }
  t.ok(inCloudflare > 0, 'some answers lie inside the Cloudflare fixture ranges');
});

t.test('generateObservations is deterministic for a seed', async (t) => {
  const first = await generateInto(7);
  const second = await generateInto(7);
  const other = await generateInto(8);
  for (const file of ['seed.csv', 'round-1.ndjson', 'round-2.ndjson']) {
    t.equal(
      await sha256(join(second, file)),
      await sha256(join(first, file)),
      `${file}: same bytes for the same seed`,
    );
  }
  t.not(
    await sha256(join(other, 'round-1.ndjson')),
    await sha256(join(first, 'round-1.ndjson')),
    'another seed differs',
  );
});

t.test('committed demo data matches demo/generate-demo.ts', async (t) => {
  const expected = buildDemoData();
  t.equal(await readFile(join(ROOT, 'demo', 'data', 'seed.csv'), 'utf8'), expected.seed, 'seed.csv');
  t.equal(expected.rounds.length, DEMO_ROUNDS.length);
  for (const [i, text] of expected.rounds.entries()) {
    const file = join(ROOT, 'demo', 'data', 'observations', `round-${i + 1}.ndjson`);
    t.equal(await readFile(file, 'utf8'), text, `round-${i + 1}.ndjson`);
  }
  t.same(buildDemoData(), expected, 'the generator is deterministic');

  for (const d of DEMO_DOMAINS) {
    t.ok(
      /^example\.(com|net|org)$/.test(d.domain) || /^[a-z0-9-]+\.example$/.test(d.domain),
      `${d.domain} is under a reserved example name`,
    );
  }
  const lines = expected.rounds.flatMap((text) =>
    text
      .trimEnd()
      .split('\n')
      .map((row) => JSON.parse(row) as Line),
  );
  t.equal(lines.length, DEMO_ROUNDS.length * DEMO_DOMAINS.length * 4, 'one line per (name, type) per round');
  t.ok(
    lines.every((l) => l.values.every((v) => canonicalIp(v) === v)),
    'every value is a canonical IP address',
  );
  const answer = (name: string, type: string, round: number): Line =>
    lines.find(
      (l) => l.name === name && l.type === type && l.time.startsWith(DEMO_ROUNDS[round - 1]!.slice(0, 10)),
    )!;
  t.same(answer('shop.example', 'A', 2).values, ['72.14.177.42'], 'shop.example on Linode in round 2');
  t.same(
    answer('shop.example', 'A', 3).values,
    ['104.21.48.7', '172.67.182.31'],
    'shop.example on Cloudflare in round 3',
  );
  t.equal(answer('status.example', 'A', 4).outcome, 'timeout', 'status.example fails in the last round');
  t.equal(
    answer('old-shop.example', 'A', 3).outcome,
    'nxdomain',
    'old-shop.example is NXDOMAIN from round 3',
  );
  t.same(answer('www.video.example', 'A', 1).cnames, [
    'video.example.global.ssl.fastly.net',
    'dualstack.n.sni.global.fastly.net',
  ]);
});
