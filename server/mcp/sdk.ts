/**
 * Every MCP exchange but the plain tools/call (fast-call.ts), through the SDK
 * (`@modelcontextprotocol/server`, docs/decisions/0006): initialize, tools/list, ping,
 * notifications, batches, other shapes of tools/call, and every protocol error.
 *
 * - 2026-07-28 (a protocol version on every request): `createMcpHandler(…, { legacy: 'reject' })`,
 *   JSON responses.
 * - 2025 era (`initialize` first): the SDK's own fallback would answer with SSE, so this leg is
 *   routed here (`isLegacyRequest`) to a stateless `WebStandardStreamableHTTPServerTransport` with
 *   `enableJsonResponse: true`.
 *
 * A tool the SDK calls runs through the call envelope with the exchange's key (tools.ts); the
 * limit headers of its result go on the HTTP response.
 */
import {
  McpServer,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  createMcpHandler,
  isLegacyRequest,
  type AuthInfo,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import type { Envelope } from '../call/envelope.js';
import { SERVER_INFO } from '../encoding/mcp-result.js';
import type { McpRequest, McpResponse } from './exchange.js';
import { responseBytes, sdkRequest } from './sdk-request.js';
import { authInfoFor, registerTools, type ToolCaller } from './tools.js';

export const INSTRUCTIONS =
  'Lookups of public IP addresses, domains and AS numbers from DNS answers this service records itself (one resolver, one vantage point, ' +
  'about a million popular domains and their www. names, since 2026-10-01), published cloud/hosting/CDN/usage ranges and an IP-to-ASN mapping. ' +
  'Every tool call needs the header "Authorization: Bearer <API_KEY>"; listing tools does not. ' +
  'null means unknown (never false); an empty list means "not observed here". No geolocation, reputation or WHOIS.';

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

/** The SDK's 2025-era versions (a client that opens with initialize). */
const LEGACY_VERSIONS: ReadonlySet<string> = new Set(SUPPORTED_PROTOCOL_VERSIONS);

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

function containsInitialize(body: unknown): boolean {
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize',
  );
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

export interface SdkPath {
  exchange(request: McpRequest, body: unknown): Promise<McpResponse>;
  close(): Promise<void>;
}

export function createSdkPath(envelope: Envelope): SdkPath {
  const newServer = () => {
    const server = new McpServer(SERVER_INFO, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    registerTools(server, envelope);
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

  async function exchange(request: McpRequest, body: unknown): Promise<McpResponse> {
    const caller: ToolCaller = { request, headers: {} };
    const authInfo = authInfoFor(caller);
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
    // The limit headers of the tool calls, then the SDK's own.
    const headers: Record<string, string> = { ...caller.headers };
    response.headers.forEach((value, name) => {
      headers[name] = value;
    });
    // Bytes, not text: no UTF-8 decode here and no encode again on the socket.
    return { status: response.status, headers, body: await responseBytes(response) };
  }

  return { exchange, close: () => modern.close() };
}
