/**
 * The command line of `make bench-api` (bench-api.ts), parsed and checked apart from the bench so
 * that test/bench-mmdb-peer.test.ts can try it: a bad flag or value is an error naming it, before
 * anything starts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { PEER_ADDRESSES } from './public-addresses.js';

export interface BenchApiArgs {
  releasesDir: string;
  seconds: number;
  runs: number;
  connections: number;
  sampleSize: number;
  workerCounts: number[];
  onlyMetering: boolean;
  onlyWorkers: boolean;
  skipMetering: boolean;
  skipWorkers: boolean;
  restOnly: boolean;
  scenario: string | undefined;
  /** The MMDB peer section (bench-peer.ts): skipped, or alone. */
  skipPeer: boolean;
  onlyPeer: boolean;
  /** Rounds of the peer section, each one run of ours then one of the peer. */
  peerRounds: number;
  /** Uniform random public IPv4 addresses the peer section asks (public-addresses.ts). */
  peerAddresses: number;
  /** An MMDB file exported before from the release under test, instead of exporting it again. */
  mmdb: string | undefined;
}

/** Rounds of the peer section without --peer-rounds. */
export const PEER_ROUNDS = 3;

function positiveInteger(flag: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} ${text}: a whole number of at least 1`);
  return n;
}

/** `argv` without node and the script; `env` for SECONDS_PER_RUN and RUNS; `root` the repository's. */
export function parseBenchApiArgs(argv: string[], env: NodeJS.ProcessEnv, root: string): BenchApiArgs {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      releases: { type: 'string', default: path.join(root, 'var/bench/releases') },
      seconds: { type: 'string', default: env.SECONDS_PER_RUN ?? '10' },
      runs: { type: 'string', default: env.RUNS ?? '3' },
      connections: { type: 'string', default: '50' },
      sample: { type: 'string', default: '20000' },
      /** Only the metering cost section (bench-metering.ts). */
      'only-metering': { type: 'boolean', default: false },
      /** Only the workers section (bench-workers.ts). */
      'only-workers': { type: 'boolean', default: false },
      /** The worker counts of the workers section, e.g. `1,2,4,8` on a machine with 16 cores. */
      workers: { type: 'string', default: '1,2' },
      /** No metering section (it needs PostgreSQL and Redis on this machine). */
      'skip-metering': { type: 'boolean', default: false },
      /** No workers section. */
      'skip-workers': { type: 'boolean', default: false },
      /** Only the REST table (no MCP, no peer, no metering section): for quick comparisons. */
      'rest-only': { type: 'boolean', default: false },
      /** Only the REST scenarios whose name contains this text (e.g. `history`): implies --rest-only. */
      scenario: { type: 'string' },
      /** No MMDB peer section (bench-peer.ts). */
      'skip-peer': { type: 'boolean', default: false },
      /** Only the MMDB peer section. */
      'only-peer': { type: 'boolean', default: false },
      /** Rounds of the peer section (ours, peer, ours, peer, …). */
      'peer-rounds': { type: 'string', default: String(PEER_ROUNDS) },
      /** How many uniform random public IPv4 addresses the peer section asks both servers. */
      'peer-addresses': { type: 'string', default: String(PEER_ADDRESSES) },
      /** The peer reads this MMDB file (exported before from the same release) instead of a new export. */
      mmdb: { type: 'string' },
    },
  });
  const workerCounts = values.workers.split(',').map(Number);
  if (workerCounts.some((n) => !Number.isInteger(n) || n < 1)) {
    throw new Error(`--workers ${values.workers}: worker counts, e.g. 1,2,4,8`);
  }
  if (values['skip-peer'] && values['only-peer'])
    throw new Error('--skip-peer and --only-peer: one or the other');
  if (values['only-peer'] && (values['only-metering'] || values['only-workers'])) {
    throw new Error('--only-peer with --only-metering or --only-workers: one section at a time');
  }
  if (values.mmdb !== undefined && values['skip-peer']) {
    throw new Error('--mmdb is for the peer section, which --skip-peer leaves out');
  }
  const mmdb = values.mmdb === undefined ? undefined : path.resolve(values.mmdb);
  if (mmdb !== undefined && !fs.statSync(mmdb, { throwIfNoEntry: false })?.isFile()) {
    throw new Error(`--mmdb ${values.mmdb}: no such file (builder export mmdb --out FILE writes one)`);
  }
  return {
    releasesDir: path.resolve(values.releases),
    seconds: positiveInteger('seconds', values.seconds),
    runs: positiveInteger('runs', values.runs),
    connections: positiveInteger('connections', values.connections),
    sampleSize: positiveInteger('sample', values.sample),
    workerCounts,
    onlyMetering: values['only-metering'],
    onlyWorkers: values['only-workers'],
    skipMetering: values['skip-metering'],
    skipWorkers: values['skip-workers'],
    restOnly: values['rest-only'],
    scenario: values.scenario,
    skipPeer: values['skip-peer'],
    onlyPeer: values['only-peer'],
    peerRounds: positiveInteger('peer-rounds', values['peer-rounds']),
    peerAddresses: positiveInteger('peer-addresses', values['peer-addresses']),
    mmdb,
  };
}
