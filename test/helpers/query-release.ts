/**
 * The demo release as the query-layer tests (test/shared/queries*.test.ts) open it, and the checks
 * they share.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { ApiError } from '../../shared/errors.js';
import { openRelease, type Release } from '../../shared/queries/index.js';
import { copyDemoRelease } from './demo-release.js';

/**
 * A private copy of the demo release in a temporary directory (`work`), opened; the directory is
 * removed and the release closed when `t` ends.
 */
export function openDemoQueries(t: Test) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'queries-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const demo = copyDemoRelease(path.join(work, 'releases'));
  const release = openRelease(path.join(demo.releasesDir, demo.file));
  t.teardown(() => release.close());
  return { work, demo, release };
}

export const epoch = (iso: string) => Date.parse(iso) / 1000;

/**
 * The addresses a release names: every ip_summary value, both ends of every asn_range row and the
 * first address of every provider range (the lookups' edges, as the range tests ask them).
 */
export function releaseAddresses(release: Release): Set<string> {
  const texts = new Set<string>(release.db.prepare(`SELECT value FROM ip_summary`).pluck().all() as string[]);
  for (const row of release.db.prepare(`SELECT first_text, last_text FROM asn_range`).all() as Array<{
    first_text: string;
    last_text: string;
  }>) {
    texts.add(row.first_text).add(row.last_text);
  }
  for (const prefix of release.db.prepare(`SELECT prefix FROM provider_range`).pluck().all() as string[]) {
    texts.add(prefix.split('/')[0]!);
  }
  return texts;
}

export function strip<T extends Record<string, unknown>>(o: T) {
  const { coverage, attribution, release: r, ...rest } = o;
  return { rest, coverage, attribution, release: r };
}

export function refused(t: Test, fn: () => unknown, code: string, status: number) {
  try {
    fn();
    t.fail(`expected ${code}`);
  } catch (err) {
    t.ok(err instanceof ApiError, 'an ApiError');
    t.equal((err as ApiError).code, code);
    t.equal((err as ApiError).status, status);
  }
}
