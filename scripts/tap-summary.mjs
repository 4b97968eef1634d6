#!/usr/bin/env node
// Reads node-tap's TAP output on stdin, passes it through, and ends with the plain
// "N passed, N failed" line (counting test points at every level); exits non-zero on failure
// and on a skipped test (every test runs: scripts/with-test-stores.sh provides PostgreSQL and Redis).
import readline from 'node:readline';

let passed = 0;
let failed = 0;
let skipped = 0;
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  process.stdout.write(`${line}\n`);
  const m = /^\s*(not ok|ok)\s+\d+/.exec(line);
  if (!m) return;
  if (/#\s*(SKIP|TODO)\b/i.test(line)) skipped++;
  else if (m[1] === 'ok') passed++;
  else failed++;
});
rl.on('close', () => {
  console.log(`tests: ${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`);
  process.exitCode = failed > 0 || skipped > 0 || passed === 0 ? 1 : 0;
});
