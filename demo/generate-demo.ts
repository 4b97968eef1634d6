/**
 * Writes the DEMO DATA used by `make demo` (no network):
 *
 *   npx tsx demo/generate-demo.ts --out demo/data
 *
 * - `<out>/seed.csv`: a Tranco-format seed (`rank,domain`, no header) of registered domains under
 *   reserved example names only (RFC 2606 / RFC 6761: example.com, example.net, example.org and
 *   second-level names under the `.example` TLD).
 * - `<out>/observations/round-<n>.ndjson`: four weekly observation rounds in the builder's NDJSON
 *   format, one line per (name, type) per round, for every seed domain and its `www.` name.
 *
 * The answers are invented, but every address is a real address inside the range that its
 * provider really publishes. Each address is checked at generation time against the committed feed
 * excerpts in test/fixtures/feeds (or, for an excerpt that is missing, against a known published
 * range), and generation fails if one is not inside its provider's list.
 *
 * The output is fixed: no clock, no randomness other than a seeded PRNG for TTLs.
 *
 * The addresses, the scenarios and the file contents are in demo/generator/; this file checks the
 * addresses and writes the files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { buildDemoData } from './generator/demo-data.js';
import { DEMO_DOMAINS } from './generator/domains.js';
import { checkAddresses, loadLists } from './generator/feed-check.js';

function repoRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'demo/data' },
      'feed-dir': { type: 'string', default: join(repoRoot(), 'test', 'fixtures', 'feeds') },
    },
    strict: true,
  });
  const lists = loadLists(values['feed-dir']);
  checkAddresses(lists);
  const files = buildDemoData();
  const outDir = values.out;
  mkdirSync(join(outDir, 'observations'), { recursive: true });
  writeFileSync(join(outDir, 'seed.csv'), files.seed);
  files.rounds.forEach((text, i) =>
    writeFileSync(join(outDir, 'observations', `round-${i + 1}.ndjson`), text),
  );
  let bytes = files.seed.length;
  for (const text of files.rounds) bytes += text.length;
  console.log('addresses checked against:');
  for (const [key, list] of Object.entries(lists)) console.log(`  ${key}: ${list.source}`);
  console.log(
    `wrote ${outDir}/seed.csv (${DEMO_DOMAINS.length} domains) and ${files.rounds.length} rounds ` +
      `(${files.rounds.map((t) => t.split('\n').length - 1).join(' + ')} lines), ${(bytes / 1024).toFixed(1)} KiB`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
