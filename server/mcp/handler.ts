/**
 * One POST /mcp exchange, independent of Fastify: era routing, the key check, and the SDK.
 *
 * - 2026-07-28 (a protocol version on every request): `createMcpHandler(…, { legacy: 'reject' })`,
 *   JSON responses.
 * - 2025 era (`initialize` first: 2025-03-26, 2025-06-18, 2025-11-25): the SDK's own fallback would
 *   answer with SSE, so this leg is routed here (`isLegacyRequest`) to a stateless
 *   `WebStandardStreamableHTTPServerTransport` with `enableJsonResponse: true`.
 *
 * The key is read here, once per POST, and only when the body calls a tool (listing needs none);
 * the tools find the outcome in the SDK's `authInfo` and add the limit headers to `CallContext`.
 */
import {
  McpServer,
  PROTOCOL_VERSION_META_KEY,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  type AuthInfo,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../../shared/errors.js';
import { operationById, type Operation } from '../../shared/operations.js';
import type { AccountsPort } from '../auth.js';
import { bearerToken } from '../auth.js';
import { isPending, type CallOutcome, type Outcome } from '../call/envelope.js';
import type { KeyPrincipal } from '../../accounts/index.js';
import { SERVER_INFO, checkAgainstSdk, toolResultChunks } from '../encoding/mcp-result.js';
import type { BodyChunks } from '../encoding/chunks.js';
import type { RefusedKeyThrottle } from '../limits/refused-keys.js';
import { SETTLED } from '../metering.js';
import { KEY_IN_URL_MESSAGE } from '../http/redact.js';
import { responseBytes, sdkRequest } from './sdk-request.js';
import { authInfoFor, registerTools, type CallContext, type ToolDeps } from './tools.js';

export { SERVER_INFO };

export const INSTRUCTIONS =
  'Lookups of public IP addresses, domains and AS numbers from DNS answers this service records itself (one resolver, one vantage point, ' +
  'about a million popular domains and their www. names, since 2026-10-01), published cloud/hosting/CDN/usage ranges and an IP-to-ASN mapping. ' +
  'Every tool call needs the header "Authorization: Bearer <API_KEY>"; listing tools does not. ' +
  'null means unknown (never false); an empty list means "not observed here". No geolocation, reputation or WHOIS.';

export interface McpRequest {
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body (at most the route's body limit). */
  body: Buffer;
  /** True when the URL's query string carries a key-like parameter (refused: 401). */
  keyInUrl: boolean;
  /** The client's address, for the refused-key throttle. */
  clientAddress?: string;
}

export interface McpResponse {
  status: number;
  headers: Record<string, string>;
  /** The body, or its pieces in order (a fast-path result: written as they are, in one writev). */
  body: Buffer | BodyChunks;
}

export interface McpEndpointOptions extends ToolDeps {
  accounts: AccountsPort;
  /** false: every exchange goes through the SDK (FAST_LANE=off); default true. */
  fastPath?: boolean;
  /** SPEC.md Authentication 7: too many refused keys from one address answer rate_limited. */
  refusedKeys?: RefusedKeyThrottle;
  /** Why the fast path is off when its start-up self-check fails (server/encoding/mcp-result.ts). */
  logWarning?: (message: string) => void;
}

export interface McpEndpoint {
  handle(request: McpRequest): Promise<McpResponse>;
  /** handle(), answered at once (not a promise) when the fast path can grant without waiting. */
  answer(request: McpRequest): McpResponse | Promise<McpResponse>;
  /** Tool calls the fast path answered since the start. */
  fastAnswered(): number;
  close(): Promise<void>;
}

function jsonRpcError(status: number, code: number, message: string): McpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })),
  };
}

function hasMethod(body: unknown, method: string): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === method,
  );
}

/** True when the body (one message or a 2025 batch) calls a tool. */
const callsTool = (body: unknown) => hasMethod(body, 'tools/call');
const containsInitialize = (body: unknown) => hasMethod(body, 'initialize');

/**
 * createMcpHandler warns on the console that `responseMode: 'json'` drops mid-call notifications;
 * these tools send none, and the line would break the JSON log stream.
 */
function quietly<T>(create: () => T): T {
  const warn = console.warn;
  console.warn = () => {};
  try {
    return create();
  } finally {
    console.warn = warn;
  }
}

/** Protocol versions of the 2025 era (a client that opens with initialize). */
const LEGACY_VERSIONS: ReadonlySet<string> = new Set([
  '2024-11-05',
  '2025-03-26',
  '2025-06-18',
  '2025-11-25',
]);

/**
 * The era of a POST, deciding the two common shapes without a second classification pass:
 * - a single request carrying the 2026-07-28 envelope claim (`_meta` protocol version) is never
 *   legacy (isLegacyRequest answers false for every claim but a claimed `initialize`); the modern
 *   handler classifies it again and answers its errors;
 * - a single JSON-RPC request or notification without a claim whose MCP-Protocol-Version header is
 *   absent or a 2025-era version is always legacy ("no-claim", "initialize", "notification").
 * Everything else (batches, posted responses, odd shapes, modern headers) goes to isLegacyRequest.
 */
async function isLegacy(
  webRequest: Request,
  body: unknown,
  versionHeader: string | undefined,
): Promise<boolean> {
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    const { jsonrpc, method, params } = body as { jsonrpc?: unknown; method?: unknown; params?: unknown };
    if (jsonrpc === '2.0' && typeof method === 'string') {
      const meta =
        params !== null && typeof params === 'object' ? (params as { _meta?: unknown })._meta : undefined;
      const claim = meta !== null && typeof meta === 'object' && PROTOCOL_VERSION_META_KEY in meta;
      if (claim && method !== 'initialize') return false;
      if (!claim && (versionHeader === undefined || LEGACY_VERSIONS.has(versionHeader.trim()))) return true;
    }
  }
  return isLegacyRequest(webRequest, body);
}

const MODERN_VERSION = '2026-07-28';
/** 2025-era versions whose stateless tools/call the SDK answers without initialize. */
const PLAIN_LEGACY_VERSIONS: ReadonlySet<string> = new Set(['2025-03-26', '2025-06-18', '2025-11-25']);
const META_VERSION = PROTOCOL_VERSION_META_KEY;
const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

interface PlainToolCall {
  modern: boolean;
  id: string | number;
  tool: Operation;
  args: unknown;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const BODY_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);
const META_KEYS: ReadonlySet<string> = new Set([META_VERSION, META_CLIENT_INFO, META_CLIENT_CAPABILITIES]);

/** True when every own key of `object` is in `allowed` (no rest object built per request). */
function onlyKeys(object: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in object) if (Object.hasOwn(object, key) && !allowed.has(key)) return false;
  return true;
}

/**
 * A POST the fast path may answer: one JSON-RPC `tools/call` of one of the five tools, in the
 * shape the SDK's clients send it, nothing more (any other member, header or version: the SDK).
 * 2026-07-28: the version header and `_meta` claim, Mcp-Method and Mcp-Name matching, client info
 * and capabilities; 2025 era: no `_meta`, a 2025 version header or none.
 */
function plainToolCall(body: unknown, headers: IncomingHttpHeaders): PlainToolCall | null {
  if (!isObject(body) || !onlyKeys(body, BODY_KEYS)) return null;
  const { jsonrpc, id, method, params } = body;
  if (jsonrpc !== '2.0' || method !== 'tools/call' || !isObject(params)) return null;
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return null;
  if (!onlyKeys(params, PARAMS_KEYS)) return null;
  const { name, arguments: args, _meta: meta } = params;
  const tool = typeof name === 'string' ? operationById(name) : undefined;
  if (tool === undefined || !tool.tool) return null;
  if (args !== undefined && !isObject(args)) return null;
  const accept = headers.accept;
  if (
    typeof accept !== 'string' ||
    !accept.includes('application/json') ||
    !accept.includes('text/event-stream')
  ) {
    return null;
  }
  const version = headers['mcp-protocol-version'];
  if (meta === undefined) {
    if (version !== undefined && !(typeof version === 'string' && PLAIN_LEGACY_VERSIONS.has(version)))
      return null;
    if (headers['mcp-method'] !== undefined || headers['mcp-name'] !== undefined) return null;
    return { modern: false, id, tool, args };
  }
  if (version !== MODERN_VERSION || headers['mcp-method'] !== 'tools/call' || headers['mcp-name'] !== name) {
    return null;
  }
  if (!isObject(meta) || meta[META_VERSION] !== MODERN_VERSION || !onlyKeys(meta, META_KEYS)) return null;
  const info = meta[META_CLIENT_INFO];
  const caps = meta[META_CLIENT_CAPABILITIES];
  if (!isObject(caps) || !isObject(info)) return null;
  if (typeof info.name !== 'string' || typeof info.version !== 'string') return null;
  return { modern: true, id, tool, args };
}

/**
 * Idle McpServer instances of one era. Building an instance (five tools, their schemas) costs more
 * than serving a call, so an instance is reused once its exchange has closed: an instance serves
 * one exchange at a time (the SDK checks it), and holds no state a later stateless exchange could
 * see (each exchange re-seeds the negotiated version and the client identity).
 */
/** Idle instances kept per era: about the concurrency one process serves. */
const MAX_IDLE = 64;

class ServerPool {
  private readonly idle: McpServer[] = [];
  constructor(private readonly create: () => McpServer) {}

  take(): McpServer {
    for (let server = this.idle.pop(); server !== undefined; server = this.idle.pop()) {
      if (!server.isConnected()) return server;
    }
    return this.create();
  }

  give(server: McpServer): void {
    // Beyond MAX_IDLE (a burst of concurrency) an instance is left to the garbage collector.
    if (this.idle.length < MAX_IDLE && !server.isConnected() && !this.idle.includes(server)) {
      this.idle.push(server);
    }
  }
}

export function createMcpEndpoint(options: McpEndpointOptions): McpEndpoint {
  const newServer = () => {
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    registerTools(server, options);
    return server;
  };
  // 2026-07-28: the SDK closes an instance when its exchange ends; that returns it to the pool.
  const modernPool: ServerPool = new ServerPool(() => {
    const server = newServer();
    server.server.onclose = () => queueMicrotask(() => modernPool.give(server));
    return server;
  });
  const legacyPool = new ServerPool(newServer);
  const modern: McpHttpHandler = quietly(() =>
    createMcpHandler(() => modernPool.take(), { legacy: 'reject', responseMode: 'json', onerror: () => {} }),
  );

  /** The 2025 era: one stateless JSON-mode transport per request (the SDK refuses to reuse one). */
  async function serveLegacy(webRequest: Request, body: unknown, authInfo: AuthInfo): Promise<Response> {
    const server = legacyPool.take();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(webRequest, { authInfo, parsedBody: body });
    } finally {
      await server.close().catch(() => {});
      // An instance that answered initialize keeps that client's version and identity: drop it.
      if (!containsInitialize(body)) legacyPool.give(server);
    }
  }

  async function callContext(request: McpRequest): Promise<CallContext> {
    const call: CallContext = { principal: null, keyRefusal: null, headers: {} };
    if (!request.keyInUrl) {
      const header = request.headers.authorization;
      const token = bearerToken(Array.isArray(header) ? header[0] : header);
      call.principal = token === null ? null : await options.accounts.verifyKey(token);
      if (call.principal !== null) return call;
    }
    call.keyRefusal = new ApiError('unauthorized', request.keyInUrl ? KEY_IN_URL_MESSAGE : undefined);
    try {
      // Counted like a refused key on /v1: over the limit the call is refused rate_limited instead.
      await options.refusedKeys?.refused(request.clientAddress);
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      call.keyRefusal = error;
      if (error.retryAfter !== undefined) call.headers['retry-after'] = String(error.retryAfter);
    }
    return call;
  }

  let fastAnswered = 0;
  // The fast path writes the SDK's bytes itself: on only once a canned call proves them the same.
  let fastPath = false;
  if (options.fastPath !== false) {
    void checkAgainstSdk().then(
      (problem) => {
        if (problem === null) fastPath = true;
        else options.logWarning?.(`MCP fast path off: ${problem}`);
      },
      (error: unknown) => options.logWarning?.(`MCP fast path off: ${(error as Error).message}`),
    );
  }

  /**
   * The fast path (docs/decisions/0009): a plain tools/call whose key, unit and lookup are all
   * granted is answered here with the bytes the SDK would send; null (nothing counted) otherwise,
   * and the SDK answers it, refusals included. At once when the key was verified moments ago and
   * the meter grants without waiting; otherwise a promise.
   */
  function answerPlainCall(
    request: McpRequest,
    call: PlainToolCall,
  ): McpResponse | null | Promise<McpResponse | null> {
    if (request.keyInUrl) return null;
    const header = request.headers.authorization;
    const token = bearerToken(Array.isArray(header) ? header[0] : header);
    if (token === null) return null;
    let outcome: Outcome;
    try {
      const principal = options.accounts.peekKey?.(token);
      if (principal === undefined) return answerPlainCallLater(token, call);
      outcome = callPlain(principal, call);
    } catch {
      return null; // the store or the meter failed: the SDK path answers it
    }
    return isPending(outcome)
      ? outcome.then(
          (o) => plainResponse(o, call),
          () => null,
        )
      : plainResponse(outcome, call);
  }

  /** The same once the key check has been waited for. */
  async function answerPlainCallLater(token: string, call: PlainToolCall): Promise<McpResponse | null> {
    let outcome: CallOutcome | null;
    try {
      const principal = await options.accounts.verifyKey(token);
      if (principal === null) return null;
      const pending = callPlain(principal, call);
      outcome = isPending(pending) ? await pending : pending;
    } catch {
      return null;
    }
    return plainResponse(outcome, call);
  }

  function callPlain(principal: KeyPrincipal, call: PlainToolCall): Outcome {
    return options.envelope.call(
      call.tool,
      { principal },
      { from: 'tool', args: call.args },
      { answersOnly: true },
    );
  }

  /** The response of a granted call (once the counters have its unit); null: the SDK answers. */
  function plainResponse(
    outcome: CallOutcome | null,
    call: PlainToolCall,
  ): McpResponse | null | Promise<McpResponse | null> {
    if (outcome === null) return null;
    if (outcome.settled !== SETTLED) return outcome.settled.then(() => granted(outcome, call));
    return granted(outcome, call);
  }

  function granted(outcome: CallOutcome, call: PlainToolCall): McpResponse {
    fastAnswered += 1;
    return {
      status: 200,
      // The type first: `{ ...outcome.headers, 'content-type': … }` takes V8's slow path, for this
      // copy and for the lane's copy of it (0.59 against 0.13 µs for both, a node loop).
      headers: { 'content-type': 'application/json', ...outcome.headers },
      body: toolResultChunks(outcome.answer!, call.id, call.modern),
    };
  }

  /** handle(), without waiting when the fast path can answer at once. */
  function answer(request: McpRequest): McpResponse | Promise<McpResponse> {
    const contentType = request.headers['content-type'];
    if (!isJsonContentType(contentType ?? null)) {
      return jsonRpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    }
    let body: unknown;
    try {
      body = JSON.parse(request.body.toString('utf8'));
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: the request body is not valid JSON');
    }
    if (fastPath) {
      const plain = plainToolCall(body, request.headers);
      const fast = plain === null ? null : answerPlainCall(request, plain);
      if (fast instanceof Promise) return fast.then((f) => f ?? viaSdk(request, body));
      if (fast !== null) return fast;
    }
    return viaSdk(request, body);
  }

  /** The exchange through the SDK. */
  async function viaSdk(request: McpRequest, body: unknown): Promise<McpResponse> {
    const call: CallContext = callsTool(body)
      ? await callContext(request)
      : { principal: null, keyRefusal: null, headers: {} };
    const authInfo = authInfoFor(call);
    // The body goes to the SDK parsed (parsedBody), so the request it sees carries none.
    const webRequest = sdkRequest(request.url, request.headers);
    const versionHeader = request.headers['mcp-protocol-version'];
    const legacy = await isLegacy(
      webRequest,
      body,
      Array.isArray(versionHeader) ? versionHeader[0] : versionHeader,
    );
    const response = legacy
      ? await serveLegacy(webRequest, body, authInfo)
      : await modern.fetch(webRequest, { authInfo, parsedBody: body });
    const headers: Record<string, string> = { ...call.headers };
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // Bytes, not text: no UTF-8 decode here and no encode again on the socket.
    return { status: response.status, headers, body: await responseBytes(response) };
  }

  const handle = async (request: McpRequest): Promise<McpResponse> => answer(request);

  return { handle, answer, fastAnswered: () => fastAnswered, close: () => modern.close() };
}
