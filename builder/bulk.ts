/**
 * Bulk enrichment (`builder query --file PATH|-`): one input per line, IPs, AS numbers and domains
 * mixed, each answered by the operation of the table (shared/operations.ts) that fits it, so every
 * answer is exactly the API's. Output: NDJSON (`{input, lookup, ...the API body}` or
 * `{input, lookup, error, message}`), or CSV/TSV of chosen dotted paths.
 */
import { ApiError } from '../shared/errors.js';
import { operationById, runInRelease, type Operation } from '../shared/operations.js';
import { type CallArguments } from '../shared/parameters.js';
import { resolveAsOf, type Release } from '../shared/queries/index.js';

export type BulkFormat = 'ndjson' | 'csv' | 'tsv';
/** Which lookup answers a domain: GET /v1/domain/{d}/hosting or /history. */
export type DomainLookup = 'hosting' | 'history';

export interface BulkOptions {
  format: BulkFormat;
  /** Dotted paths of the CSV/TSV columns (between `input` and `error`); required for csv/tsv. */
  fields: string[] | null;
  domains: DomainLookup;
  /**
   * NDJSON: false leaves out coverage, attribution and release, the same on every line (about
   * 3 KB of each line: `builder inspect` shows them once).
   */
  blocks?: boolean;
  /** Every answer as of this moment (docs/api.md#as-of-a-past-moment); none: the current answers. */
  asOf?: string | undefined;
}

export type InputKind = 'ip' | 'asn' | 'domain';

const IP_LIKE = /^(?:[0-9.]+|[0-9a-f:.]*:[0-9a-f:.]*)(?:\/\d*)?$/i;
const ASN_LIKE = /^(?:as)?\d+$/i;

/**
 * The lookup an input line goes to: digits or AS<digits> are AS numbers, digits and dots or
 * anything with a colon (and a /length: a range, refused as invalid_ip) are addresses, the rest
 * domain names. Each lookup then checks its input and answers with its Errors-table code.
 */
export function classifyInput(input: string): InputKind {
  if (ASN_LIKE.test(input)) return 'asn';
  if (IP_LIKE.test(input)) return 'ip';
  return 'domain';
}

/** One parsed column path: names, with '[]' for "each element of this list". */
type FieldPath = string[];

export function parseFieldPath(text: string): FieldPath {
  if (!/^[A-Za-z_][\w]*(?:\[\])?(?:\.[A-Za-z_][\w]*(?:\[\])?)*$/.test(text)) {
    throw new Error(
      `--fields: ${JSON.stringify(text)} is not a dotted path (e.g. asn.asn or provider_ranges[].category)`,
    );
  }
  return text.split('.').flatMap((part) => (part.endsWith('[]') ? [part.slice(0, -2), '[]'] : [part]));
}

/** The value at `path` in `value`: a list where the path crosses a `[]`. */
export function valueAt(value: unknown, path: FieldPath, from = 0): unknown {
  let v = value;
  for (let i = from; i < path.length; i++) {
    if (v === null || v === undefined) return undefined;
    const step = path[i]!;
    if (step === '[]') {
      if (!Array.isArray(v)) return undefined;
      return v.flatMap((item) => {
        const inner = valueAt(item, path, i + 1);
        return inner === undefined || inner === null ? [] : [inner];
      });
    }
    v = typeof v === 'object' ? (v as Record<string, unknown>)[step] : undefined;
  }
  return v;
}

/** A cell's text: empty for null/absent, list elements joined by ";", objects as JSON. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (Array.isArray(value)) return value.map(cellText).join(';');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

function tsvCell(text: string): string {
  return text.replace(/[\t\r\n]/g, ' ');
}

const LOOKUPS: Record<InputKind | 'history', Operation> = {
  ip: operationById('lookup_ip')!,
  asn: operationById('lookup_asn')!,
  domain: operationById('domain_hosting')!,
  history: operationById('domain_history')!,
};

/** Turns input lines into output lines; `failed` counts the lines answered with an error. */
export class BulkEnricher {
  failed = 0;
  inputs = 0;
  private readonly paths: FieldPath[] | null;
  /** `,"coverage":…,"attribution":…,"release":…}` and the newline, as bytes. */
  private readonly blocksTail: Buffer;
  private readonly context;
  /** The blocks every answer carries (the release's, or those as of options.asOf). */
  private readonly blocks: Pick<Release, 'coverage' | 'attribution' | 'release'>;

  constructor(
    private readonly release: Release,
    private readonly options: BulkOptions,
  ) {
    if (options.format !== 'ndjson' && (options.fields === null || options.fields.length === 0))
      throw new Error(`--format ${options.format} needs --fields (e.g. --fields asn.asn,provider)`);
    if (options.format === 'ndjson' && options.fields !== null)
      throw new Error('--fields applies to --format csv or tsv; NDJSON lines carry the whole answer');
    this.paths = options.fields?.map(parseFieldPath) ?? null;
    // As of a moment, every answer carries that moment's blocks (checked here: a bad one fails once).
    this.blocks = options.asOf === undefined ? release : resolveAsOf(release, options.asOf).blocks;
    const blocksJson = JSON.stringify({
      coverage: this.blocks.coverage,
      attribution: this.blocks.attribution,
      release: this.blocks.release,
    }).slice(1, -1);
    this.blocksTail = Buffer.from(`,${blocksJson}}\n`);
    this.context = { release, pageSize: (n: number) => n };
  }

  /** The CSV/TSV header line (with its newline), or '' for NDJSON. */
  header(): string {
    if (this.options.format === 'ndjson') return '';
    return this.row(['input', ...this.options.fields!, 'error']);
  }

  /** The output line (with its newline) of one input; blank lines and # comments give ''. */
  line(raw: string): string {
    const [text, tail] = this.parts(raw);
    return tail === null ? text : text + tail.toString('utf8');
  }

  /**
   * The output line of one input in two parts: its own text and, for NDJSON with the blocks, the
   * blocks' bytes (the same Buffer every time: about 3 KB per line not re-encoded), else null.
   */
  parts(raw: string): [string, Buffer | null] {
    const input = raw.trim();
    if (input === '' || input.startsWith('#')) return ['', null];
    this.inputs++;
    const kind = classifyInput(input);
    const op = kind === 'domain' && this.options.domains === 'history' ? LOOKUPS.history : LOOKUPS[kind];
    const args: CallArguments = { [op.pathParameter!]: input };
    if (this.options.asOf !== undefined) args.as_of = this.options.asOf;
    let body: Record<string, unknown>;
    let error: { error: string; message: string } | null = null;
    try {
      body = runInRelease(op, args, this.context) as Record<string, unknown>;
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      this.failed++;
      error = err.toBody();
      body = error;
    }
    if (this.paths === null) return this.ndjson(input, op.id, body, error !== null);
    const cells = [input];
    for (const p of this.paths) {
      // The fields are paths into {input, lookup, ...body}, read without building that object.
      const v =
        p.length === 1 && p[0] === 'input'
          ? input
          : p.length === 1 && p[0] === 'lookup'
            ? op.id
            : valueAt(body, p);
      cells.push(cellText(v));
    }
    cells.push(error?.error ?? '');
    return [this.row(cells), null];
  }

  private ndjson(
    input: string,
    lookup: string,
    body: Record<string, unknown>,
    failed: boolean,
  ): [string, Buffer | null] {
    const head = `{"input":${JSON.stringify(input)},"lookup":"${lookup}",`;
    const r = this.blocks;
    // The blocks are the same on every answer: serialised once (they are the body's last keys).
    if (
      !failed &&
      body.coverage === r.coverage &&
      body.attribution === r.attribution &&
      body.release === r.release
    ) {
      const { coverage: _c, attribution: _a, release: _r, ...rest } = body;
      const text = `${head}${JSON.stringify(rest).slice(1, -1)}`;
      return this.options.blocks === false ? [`${text}}\n`, null] : [text, this.blocksTail];
    }
    return [`${head}${JSON.stringify(body).slice(1)}\n`, null];
  }

  private row(cells: string[]): string {
    return this.options.format === 'csv'
      ? `${cells.map(csvCell).join(',')}\n`
      : `${cells.map(tsvCell).join('\t')}\n`;
  }
}
