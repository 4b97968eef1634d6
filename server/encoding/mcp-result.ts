/**
 * The bytes of a `tools/call` response, written without the SDK (the MCP fast path, decision 0009):
 * the JSON-RPC envelope around the result `{content: [{type: "text", text}], structuredContent}`
 * exactly as the SDK serialises it in each era. The answer's JSON is reused twice: escaped as the
 * text (the release blocks escaped once per release) and as is as the structured content.
 *
 * Because these bytes imitate the SDK's, `checkAgainstSdk()` runs one canned call through the
 * SDK at start-up and compares: when they differ (a new SDK version serialises otherwise) the fast
 * path stays off and the log says why.
 */
import {
  McpServer,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
} from '@modelcontextprotocol/server';
import type { Answer } from '../call/answer-cache.js';
import { escapedJsonHead, responseParts, type ReleaseBlocksJson } from './json.js';
import { chunksBuffer, type BodyChunks } from './chunks.js';
import { countText } from './count-text.js';

/** What the server says it is, in every era's result `_meta` and in initialize. */
export const SERVER_INFO = { name: 'ipscope', version: '0.1.0' };

const CONTENT_START = '{"result":{"content":[{"type":"text","text":';
const STRUCTURED_START = '}],"structuredContent":';
/** What the 2026-07-28 result carries besides content and structuredContent. */
const MODERN_TAIL = `,"resultType":"complete","_meta":${JSON.stringify({ 'io.modelcontextprotocol/serverInfo': SERVER_INFO })}}`;
/** From the end of the structured content to the id, per era. */
const TAIL_START = { modern: `${MODERN_TAIL},"jsonrpc":"2.0","id":`, legacy: '},"jsonrpc":"2.0","id":' };

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
  // A number id is a safe integer (the fast path takes no other): its JSON is countText's.
  const end = `${typeof id === 'number' ? countText(id) : JSON.stringify(id)}}`;
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

/** A canned answer with what escaping must get right: quotes, backslashes, control and non-ASCII characters. */
const CANNED = {
  ip: '192.0.2.1',
  note: 'a "quoted" \\ back\nslash, tab\t, é, 日本, \u2028',
  items: [1, null, true, { nested: 'x' }],
  coverage: { semantics: ['null means unknown'], seed: { source: 'self-check', names: 0 } },
  attribution: [{ source: 'self-check', by: 'ipscope', license: 'none' }],
  release: { id: '20260101T000000Z', built_at: '2026-01-01T00:00:00Z' },
};

/** The body the SDK sends for a call answered with CANNED, in one era. */
async function sdkBytes(modern: boolean): Promise<Buffer> {
  const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} } });
  server.registerTool('self_check', { description: 'start-up check of the fast path' }, () => ({
    content: [{ type: 'text', text: JSON.stringify(CANNED) }],
    structuredContent: CANNED,
  }));
  const body = modern
    ? {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name: 'self_check',
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'self-check', version: '1.0.0' },
            'io.modelcontextprotocol/clientCapabilities': {},
          },
        },
      }
    : { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'self_check', arguments: {} } };
  const headers = new Headers({
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    ...(modern
      ? { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'self_check' }
      : { 'mcp-protocol-version': '2025-06-18' }),
  });
  const request = new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
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
      response = await handler.fetch(request, { parsedBody: body });
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
    response = await transport.handleRequest(request, { parsedBody: body });
    await server.close();
  }
  return Buffer.from(await response.arrayBuffer());
}

/**
 * Compares the fast encoding with the SDK's for one canned call in both eras; null when they are
 * the same bytes, else why not.
 */
export async function checkAgainstSdk(): Promise<string | null> {
  const answer: Answer = { json: responseParts(CANNED), billable: true };
  for (const modern of [true, false]) {
    const era = modern ? '2026-07-28' : '2025';
    let sdk: Buffer;
    try {
      sdk = await sdkBytes(modern);
    } catch (error) {
      return `the ${era} self-check call through the SDK failed: ${(error as Error).message}`;
    }
    const fast = chunksBuffer(toolResultChunks(answer, 7, modern));
    if (!sdk.equals(fast)) {
      return `the ${era} result bytes differ from the SDK's (SDK ${sdk.length} bytes: ${sdk.toString('utf8', 0, 200)}…)`;
    }
  }
  return null;
}
