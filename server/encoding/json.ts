/**
 * Response bodies as JSON bytes, fast: a lookup's release blocks (coverage, attribution, release;
 * about 2.5 KB, the same for every response of a release) are serialised and encoded once per
 * release, and a response is written as its own fields (the head) then those blocks.
 */

/** The content type of every JSON response of the REST API. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A release's coverage, attribution and release blocks as JSON, with the response's closing brace. */
export interface ReleaseBlocksJson {
  /** `"coverage":…,"attribution":…,"release":…}` */
  readonly text: string;
  /** The text as UTF-8, written after every response head of the release. */
  readonly bytes: Buffer;
  /** The text escaped as the end of a JSON string value, closing quote included (MCP's text copy). */
  readonly escaped: string;
}

/**
 * A response's JSON in two parts: `head`, its own fields (`{…,`, or `{` when it has none), and
 * `blocks`, the release blocks (ReleaseBlocksJson). A response without release blocks (a bogon
 * lookup_ip, an error, a ping) is all head and `blocks` is null. `head` is UTF-8 when the response
 * is kept to be sent many times.
 */
export interface ResponseJson {
  readonly head: string | Buffer;
  readonly blocks: ReleaseBlocksJson | null;
}

/**
 * coverage object of an open release -> its serialised blocks. Every response of a release carries
 * the release's own coverage object (shared/queries blocks()), so it keys them; weak: the entry
 * dies with the release.
 */
const BLOCKS_JSON = new WeakMap<object, ReleaseBlocksJson>();

function blocksOf(response: {
  coverage: object;
  attribution?: unknown;
  release?: unknown;
}): ReleaseBlocksJson {
  let blocks = BLOCKS_JSON.get(response.coverage);
  if (blocks === undefined) {
    const { coverage, attribution, release } = response;
    const text = `${JSON.stringify({ coverage, attribution, release }).slice(1, -1)}}`;
    const escaped = JSON.stringify(text).slice(1);
    blocks = { text, bytes: Buffer.from(text), escaped };
    BLOCKS_JSON.set(response.coverage, blocks);
  }
  return blocks;
}

/** The parts of a response whose head was written already (`head`: `{…,`) in `release`. */
export function releaseParts(
  head: string,
  release: { coverage: object; attribution: unknown; release: unknown },
): ResponseJson {
  return { head, blocks: blocksOf(release) };
}

/** The response's JSON in parts (ResponseJson): what JSON.stringify gives, written in two pieces. */
export function responseParts(response: object): ResponseJson {
  const r = response as { coverage?: unknown; attribution?: unknown; release?: unknown };
  if (r.coverage === undefined || r.coverage === null || typeof r.coverage !== 'object') {
    return { head: JSON.stringify(response), blocks: null };
  }
  const blocks = blocksOf(r as { coverage: object });
  const { coverage: _c, attribution: _a, release: _r, ...rest } = r;
  const head = JSON.stringify(rest);
  return { head: head.length === 2 ? '{' : `${head.slice(0, -1)},`, blocks };
}

/** The JSON text of parts from responseParts. */
export function jsonText(json: ResponseJson): string {
  const head = typeof json.head === 'string' ? json.head : json.head.toString('utf8');
  return json.blocks === null ? head : head + json.blocks.text;
}

/** The size of the JSON in bytes (a Content-Length). */
export function jsonByteLength(json: ResponseJson): number {
  return Buffer.byteLength(json.head) + (json.blocks === null ? 0 : json.blocks.bytes.length);
}

/**
 * The start of JSON.stringify(jsonText(json)), the response as a JSON string value (the text of an
 * MCP tool result): the head escaped, from the opening quote, and the closing quote when there are
 * no blocks; else `blocks.escaped` follows. Escaping works character by character and the head ends
 * with `{` or `,`, so the two escaped pieces join into the escaped whole.
 */
export function escapedJsonHead(json: ResponseJson): string {
  const head = JSON.stringify(typeof json.head === 'string' ? json.head : json.head.toString('utf8'));
  return json.blocks === null ? head : head.slice(0, -1);
}

/** The response as JSON text (responseParts joined). */
export function responseJson(response: object): string {
  return jsonText(responseParts(response));
}
