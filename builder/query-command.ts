/**
 * `builder query …`: the five lookups offline, on a release file, through the same query layer as
 * the REST API and MCP (so the JSON is the same the server sends).
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import path from 'node:path';
import { ApiError } from '../shared/errors.js';
import {
  DEFAULT_LIMIT,
  MAX_LIMIT,
  domainHistory,
  domainHosting,
  ipDomains,
  lookupAsn,
  lookupIp,
  openRelease,
  type Release,
} from '../shared/queries/index.js';
import { currentReleaseFile } from './release/publish.js';

function limitArg(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_LIMIT) {
    throw new InvalidArgumentError(`expected a whole number from 1 to ${MAX_LIMIT}`);
  }
  return n;
}

interface QueryOptions {
  release?: string;
  limit: number;
  cursor?: string;
  includeEnded?: boolean;
}

function openChosen(releasesDir: string, chosen: string | undefined): Release {
  if (chosen === undefined) {
    const current = currentReleaseFile(releasesDir);
    if (!current) {
      throw new Error(
        `no release in ${releasesDir}: run "npx builder release" first, or pass --release <id>`,
      );
    }
    return openRelease(current);
  }
  const name = chosen.endsWith('.sqlite') ? chosen : `${chosen}.sqlite`;
  return openRelease(name.includes('/') ? name : path.join(releasesDir, name));
}

export function registerQueryCommand(program: Command, releasesDir: () => string): void {
  const query = program
    .command('query')
    .description('Run a lookup offline on a release and print the JSON the API would answer.');
  const run = (fn: (release: Release, options: QueryOptions) => unknown) => (options: QueryOptions) => {
    const release = openChosen(releasesDir(), options.release);
    try {
      console.log(JSON.stringify(fn(release, options), null, 2));
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      console.error(JSON.stringify(err.toBody()));
      process.exitCode = 1;
    } finally {
      release.close();
    }
  };
  const common = (c: Command, paged: boolean) => {
    c.option('--release <id>', 'release id or file name (default: the CURRENT release)');
    if (paged) {
      c.option('--limit <n>', `items per page, 1 to ${MAX_LIMIT}`, limitArg, DEFAULT_LIMIT).option(
        '--cursor <cursor>',
        'next_cursor of the previous page',
      );
    }
    return c;
  };
  common(query.command('ip <ip>').description('What is this IP (GET /v1/ip/{ip}).'), false).action(
    (ip: string, o: QueryOptions) => run((r) => lookupIp(r, { ip }))(o),
  );
  common(
    query.command('ip-domains <ip>').description('Domains seen on this IP (GET /v1/ip/{ip}/domains).'),
    true,
  )
    .option('--include-ended', 'also list ended intervals')
    .action((ip: string, o: QueryOptions) =>
      run((r) =>
        ipDomains(r, { ip, includeEnded: o.includeEnded === true, limit: o.limit, cursor: o.cursor }),
      )(o),
    );
  common(
    query
      .command('history <domain>')
      .description('DNS history of a domain (GET /v1/domain/{domain}/history).'),
    true,
  ).action((domain: string, o: QueryOptions) =>
    run((r) => domainHistory(r, { domain, limit: o.limit, cursor: o.cursor }))(o),
  );
  common(
    query
      .command('hosting <domain>')
      .description('Networks a domain moved through (GET /v1/domain/{domain}/hosting).'),
    false,
  ).action((domain: string, o: QueryOptions) => run((r) => domainHosting(r, { domain }))(o));
  common(
    query.command('asn <asn>').description('What an AS routes (GET /v1/asn/{asn}); 64500 or AS64500.'),
    true,
  ).action((asn: string, o: QueryOptions) =>
    run((r) => lookupAsn(r, { asn, limit: o.limit, cursor: o.cursor }))(o),
  );
}
