/**
 * `builder query …`: the lookups offline, on a release file, through the same query layer as the
 * REST API and MCP (so the JSON is the same the server sends). One subcommand per operation of the
 * table (shared/operations.ts) that has one: its path parameter is the argument, its query
 * parameters are options derived from their declarations.
 */
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { z } from 'zod';
import path from 'node:path';
import { ApiError } from '../shared/errors.js';
import { OPERATIONS, runInRelease, type Operation } from '../shared/operations.js';
import { QUERY_PARAMETERS, type CallArguments, type QueryParameterName } from '../shared/parameters.js';
import { openRelease, type Release } from '../shared/queries/index.js';
import { currentReleaseFile } from './release/publish.js';
import { bulkCommand } from './bulk-command.js';
import type { BulkFormat, DomainLookup } from './bulk.js';

export function openChosen(releasesDir: string, chosen: string | undefined): Release {
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

/** `include_ended` -> `--include-ended` and the commander key `includeEnded`. */
const flagOf = (name: string) => name.replace(/_/g, '-');
const keyOf = (name: string) => name.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase());

/** The option of a query parameter, checked with the parameter's own schema. */
function addOption(command: Command, name: QueryParameterName): void {
  const p = QUERY_PARAMETERS[name];
  const description = p.description.split(';')[0]!;
  if (p.kind === 'boolean') {
    command.option(`--${flagOf(name)}`, description);
    return;
  }
  const expected =
    p.kind === 'time'
      ? 'expected an ISO 8601 date or timestamp in UTC, e.g. 2026-10-05 or 2026-10-05T12:00:00Z'
      : p.schema instanceof z.ZodNumber
        ? `expected a whole number from ${p.schema.minValue} to ${p.schema.maxValue}`
        : p.schema instanceof z.ZodString
          ? `expected at most ${p.schema.maxLength} characters`
          : 'not a valid value';
  const parse = (value: string): unknown => {
    const parsed = p.schema.safeParse(p.kind === 'integer' && /^\d+$/.test(value) ? Number(value) : value);
    if (!parsed.success) throw new InvalidArgumentError(expected);
    return parsed.data;
  };
  command.option(
    `--${flagOf(name)} <${flagOf(name)}>`,
    description,
    parse,
    'fallback' in p ? p.fallback : undefined,
  );
}

/** The query layer's arguments from the command's argument and options. */
function argumentsOf(
  op: Operation,
  value: string | undefined,
  options: Record<string, unknown>,
  parent: Record<string, unknown>,
): CallArguments {
  const args: Record<string, unknown> = {};
  if (op.pathParameter !== undefined) args[op.pathParameter] = value;
  for (const name of op.query) {
    // `query` has --as-of too (bulk); commander gives it to the parent wherever it stands.
    const option = options[keyOf(name)] ?? parent[keyOf(name)];
    args[name] = QUERY_PARAMETERS[name].kind === 'boolean' ? option === true : option;
  }
  return args as CallArguments;
}

export function registerQueryCommand(program: Command, releasesDir: () => string): void {
  const query = program
    .command('query')
    .description(
      'Run a lookup offline on a release and print the JSON the API would answer; ' +
        'with --file, enrich many inputs (IPs, AS numbers, domains; one per line) in bulk.',
    )
    .option('--file <path>', 'bulk: read inputs from a file (plain or .gz), "-" for stdin')
    .option('--format <format>', 'bulk output: ndjson, csv or tsv', 'ndjson')
    .option(
      '--fields <paths>',
      'bulk csv/tsv: comma-separated dotted paths, e.g. asn.asn,asn.descr,provider,provider_ranges[].category',
    )
    .option('--domains <lookup>', 'bulk: which lookup answers a domain: hosting or history', 'hosting')
    .option(
      '--no-blocks',
      'bulk NDJSON: leave out coverage, attribution and release (the same on every line; see "builder inspect")',
    )
    .option('--release <id>', 'release id or file name (default: the CURRENT release)')
    .option(
      '--as-of <moment>',
      'answer as of this moment: an ISO 8601 date or timestamp in UTC (docs/api.md#as-of-a-past-moment)',
    )
    .action(
      async (options: {
        file?: string;
        format: string;
        fields?: string;
        domains: string;
        blocks: boolean;
        release?: string;
        asOf?: string;
      }) => {
        if (options.file === undefined) {
          query.help({ error: true });
          return;
        }
        if (!['ndjson', 'csv', 'tsv'].includes(options.format))
          throw new Error(`--format ${JSON.stringify(options.format)}: expected ndjson, csv or tsv`);
        if (options.domains !== 'hosting' && options.domains !== 'history')
          throw new Error(`--domains ${JSON.stringify(options.domains)}: expected hosting or history`);
        const release = openChosen(releasesDir(), options.release);
        try {
          const result = await bulkCommand(release, options.file, {
            format: options.format as BulkFormat,
            fields: options.fields === undefined ? null : options.fields.split(',').map((f) => f.trim()),
            domains: options.domains as DomainLookup,
            blocks: options.blocks,
            asOf: options.asOf,
          });
          if (result.failed > 0) {
            console.error(`query: ${result.failed} of ${result.inputs} inputs answered with an error`);
            process.exitCode = 1;
          }
        } finally {
          release.close();
        }
      },
    );
  for (const op of OPERATIONS) {
    if (op.command === null) continue;
    const argument = op.pathParameter ? ` <${op.pathParameter}>` : '';
    const command = query
      .command(`${op.command}${argument}`)
      .description(`${op.summary} (GET ${op.path})`)
      .option('--release <id>', 'release id or file name (default: the CURRENT release)');
    for (const name of op.query) addOption(command, name);
    command.action((...given: unknown[]) => {
      const value = op.pathParameter ? (given[0] as string) : undefined;
      const options = given[op.pathParameter ? 1 : 0] as Record<string, unknown> & { release?: string };
      // `query` has --release too (bulk); commander gives it to the parent wherever it stands.
      const chosen = options.release ?? (query.opts() as { release?: string }).release;
      const release = openChosen(releasesDir(), chosen);
      try {
        const args = argumentsOf(op, value, options, query.opts());
        const body = runInRelease(op, args, { release, pageSize: (n) => n });
        console.log(JSON.stringify(body, null, 2));
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        console.error(JSON.stringify(err.toBody()));
        process.exitCode = 1;
      } finally {
        release.close();
      }
    });
  }
}
