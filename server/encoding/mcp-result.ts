/**
 * The bytes of a `tools/call` response, written without the SDK (the MCP fast call,
 * docs/decisions/0009): the JSON-RPC envelope around the result `{content: [{type: "text", text}],
 * structuredContent}` of an answer, or `{content: [{type: "text", text}], isError: true}` of a
 * refusal, exactly as the SDK serialises them in each era. An answer's JSON is reused twice:
 * escaped as the text (the release blocks escaped once per release) and as is as the structured
 * content.
 *
 * Because these bytes imitate the SDK's, `checkAgainstSdk()` runs canned calls through the SDK
 * before the server listens, in every protocol version it serves, and compares: the fast call takes
 * the versions whose bytes are the same (a new SDK version that serialises otherwise turns it off
 * for them, and the log says why).
 */
import {
  JSONRPC_VERSION,
  McpServer,
  SERVER_INFO_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  type CallToolResult,
} from '@modelcontextprotocol/server';
import type { Answer } from '../call/answer-cache.js';
import { MODERN_REVISION, modernToolCall } from './mcp-era.js';
import { escapedJsonHead, responseParts, type ReleaseBlocksJson } from './json.js';
import { chunksBuffer, type BodyChunks } from './chunks.js';
import { countText } from './count-text.js';

/** What the server says it is, in every era's result `_meta` and in initialize. */
export const SERVER_INFO = { name: 'ipscope', version: '0.1.0' };

const CONTENT_START = '{"result":{"content":[{"type":"text","text":';
const STRUCTURED_START = '}],"structuredContent":';
const IS_ERROR = '}],"isError":true';
/** What the 2026-07-28 result carries besides content and structuredContent. */
const MODERN_TAIL = `,"resultType":"complete","_meta":${JSON.stringify({ [SERVER_INFO_META_KEY]: SERVER_INFO })}}`;
const ID_START = `,"jsonrpc":${JSON.stringify(JSONRPC_VERSION)},"id":`;
/** From the end of the structured content to the id, per era. */
const TAIL_START = { modern: `${MODERN_TAIL}${ID_START}`, legacy: `}${ID_START}` };

/**
 * The release blocks joined with the constant bytes that follow them, once per release: the escaped
 * blocks with the start of the structured content, and the blocks with each era's tail up to the id.
 * Fewer pieces to write: each costs a pass through node's writable stream.
 */
interface JoinedBlocks {
  escapedThenStructured: Buffer;
  modernTail: Buffer;
  legacyTail: Buffer;
}
const joinedBlocks = new WeakMap<ReleaseBlocksJson, JoinedBlocks>();

function joinedOf(blocks: ReleaseBlocksJson): JoinedBlocks {
  let joined = joinedBlocks.get(blocks);
  if (joined === undefined) {
    joined = {
      escapedThenStructured: Buffer.from(blocks.escaped + STRUCTURED_START),
      modernTail: Buffer.from(blocks.text + TAIL_START.modern),
      legacyTail: Buffer.from(blocks.text + TAIL_START.legacy),
    };
    joinedBlocks.set(blocks, joined);
  }
  return joined;
}

/**
 * Per kept answer, the start of the result through its head escaped as the start of the text content
 * (UTF-8): a kept answer costs about its own size again here, not the whole result.
 */
const escapedHeads = new WeakMap<object, Buffer>();

/**
 * The body of a tools/call answered with `answer`, in pieces (strings are UTF-8): five with the
 * release blocks (the first a string unless the answer is kept, so node writes the status line
 * and headers with it); without them (a bogon address) one string, or four pieces when kept.
 */
export function toolResultChunks(answer: Answer, id: string | number, modern: boolean): BodyChunks {
  const { json } = answer;
  let start: string | Buffer | undefined = answer.kept ? escapedHeads.get(json) : undefined;
  if (start === undefined) {
    start = CONTENT_START + escapedJsonHead(json);
    if (answer.kept) {
      const bytes = Buffer.from(start);
      escapedHeads.set(json, bytes);
      start = bytes;
    }
  }
  const end = idEnd(id);
  const { head, blocks } = json;
  if (blocks === null) {
    const tail = (modern ? TAIL_START.modern : TAIL_START.legacy) + end;
    return typeof start === 'string' && typeof head === 'string'
      ? [start + STRUCTURED_START + head + tail]
      : [start, STRUCTURED_START, head, tail];
  }
  const joined = joinedOf(blocks);
  return [start, joined.escapedThenStructured, head, modern ? joined.modernTail : joined.legacyTail, end];
}

/** The id and the closing brace: a number id is a safe integer (the fast path takes no other), whose JSON is countText's. */
function idEnd(id: string | number): string {
  return `${typeof id === 'number' ? countText(id) : JSON.stringify(id)}}`;
}

/** The body of a tools/call refused with `text` (`Error executing tool …`), in one piece. */
export function toolErrorChunks(text: string, id: string | number, modern: boolean): BodyChunks {
  return [
    CONTENT_START +
      JSON.stringify(text) +
      IS_ERROR +
      (modern ? TAIL_START.modern : TAIL_START.legacy) +
      idEnd(id),
  ];
}

/** A canned answer with what escaping must get right: quotes, backslashes, control and non-ASCII characters. */
const CANNED = {
  ip: '192.0.2.1',
  note: 'a "quoted" \\ back\nslash, tab\t, é, 日本, \u2028',
  items: [1, null, true, { nested: 'x' }],
  coverage: { semantics: ['null means unknown'], seed: { source: 'self-check', names: 0 } },
  attribution: [{ source: 'self-check', by: 'ipscope', license: 'none' }],
  release: { id: '20260101T000000Z', built_at: '2026-01-01T00:00:00Z' },
};
const CANNED_REFUSAL =
  'Error executing tool self_check: invalid_ip: "1.2.3.0/24" is a range, not «one» address';

/** The body the SDK sends for a call of a tool returning `result`, in one protocol version. */
async function sdkBytes(result: CallToolResult, version: string): Promise<Buffer> {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
  server.registerTool('self_check', { description: 'start-up check of the fast path' }, () => result);
  const modern = version === MODERN_REVISION;
  const call = modern
    ? modernToolCall('self_check', {}, 7)
    : {
        body: {
          jsonrpc: JSONRPC_VERSION,
          id: 7,
          method: 'tools/call',
          params: { name: 'self_check', arguments: {} },
        },
        headers: { 'mcp-protocol-version': version },
      };
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: new Headers({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...call.headers,
    }),
    body: JSON.stringify(call.body),
  });
  let response: Response;
  if (modern) {
    const warn = console.warn;
    console.warn = () => {}; // createMcpHandler warns about JSON responses; nothing to say here
    try {
      const handler = createMcpHandler(() => server, {
        legacy: 'reject',
        responseMode: 'json',
        onerror: () => {},
      });
      response = await handler.fetch(request, { parsedBody: call.body });
      await handler.close();
    } finally {
      console.warn = warn;
    }
  } else {
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    response = await transport.handleRequest(request, { parsedBody: call.body });
    await server.close();
  }
  return Buffer.from(await response.arrayBuffer());
}

/** The protocol versions whose fast bytes are the SDK's, and why each other one is not. */
export interface SelfCheck {
  /** The 2026-07-28 era (MODERN_REVISION) matched. */
  modern: boolean;
  /** The 2025-era versions (MCP-Protocol-Version) whose stateless tools/call matched. */
  legacyVersions: ReadonlySet<string>;
  /** Why a version is not taken (empty when every one is). */
  problems: string[];
}

/**
 * Runs a canned answer and a canned refusal through the SDK in every protocol version it serves
 * and compares the bytes with the fast encoding's.
 */
export async function checkAgainstSdk(): Promise<SelfCheck> {
  const answer: Answer = { json: responseParts(CANNED), billable: true };
  const answered: CallToolResult = {
    content: [{ type: 'text', text: JSON.stringify(CANNED) }],
    structuredContent: CANNED,
  };
  const refused: CallToolResult = { content: [{ type: 'text', text: CANNED_REFUSAL }], isError: true };
  const legacyVersions = new Set<string>();
  const problems: string[] = [];
  let modern = false;
  for (const version of [MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS]) {
    const isModern = version === MODERN_REVISION;
    const cases: Array<[string, CallToolResult, BodyChunks]> = [
      ['result', answered, toolResultChunks(answer, 7, isModern)],
      ['refusal', refused, toolErrorChunks(CANNED_REFUSAL, 7, isModern)],
    ];
    let same = true;
    for (const [what, result, fast] of cases) {
      let sdk: Buffer;
      try {
        sdk = await sdkBytes(result, version);
      } catch (error) {
        problems.push(`${version}: the self-check call through the SDK failed: ${(error as Error).message}`);
        same = false;
        break;
      }
      const ours = chunksBuffer(fast);
      if (!sdk.equals(ours)) {
        problems.push(
          `${version}: the ${what} bytes differ from the SDK's (SDK ${sdk.length} bytes: ${sdk.toString('utf8', 0, 160)}…)`,
        );
        same = false;
        break;
      }
    }
    if (!same) continue;
    if (isModern) modern = true;
    else legacyVersions.add(version);
  }
  return { modern, legacyVersions, problems };
}
