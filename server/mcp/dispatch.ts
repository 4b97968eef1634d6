/**
 * POST /mcp, once the HTTP route has read the body (route.ts): the content type (415) and the JSON
 * (400, a JSON-RPC parse error), then one of two paths, chosen by the message alone:
 * - a plain tools/call (fast-call.ts): through the call envelope, answered with the SDK's bytes;
 * - everything else: the SDK (sdk.ts).
 * The fast path's versions are proven against the SDK before the endpoint exists (createMcpEndpoint
 * resolves once checkAgainstSdk has answered), so no request depends on when it arrived.
 */
import { PARSE_ERROR, isJsonContentType } from '@modelcontextprotocol/server';
import type { Envelope } from '../call/envelope.js';
import { JSON_CONTENT_TYPE, responseJson } from '../encoding/json.js';
import { checkAgainstSdk } from '../encoding/mcp-result.js';
import type { McpRequest, McpResponse } from './exchange.js';
import { createFastCall } from './fast-call.js';
import { createSdkPath } from './sdk.js';

export interface McpEndpoint {
  /** Answers one exchange; `respond` is called once (at once when the fast call can). */
  exchange(request: McpRequest, respond: (response: McpResponse) => void): void;
  close(): Promise<void>;
}

export interface McpEndpointOptions {
  envelope: Envelope;
  /** Why the fast call does not take some (or all) protocol versions. */
  logWarning?: (message: string) => void;
}

/** The JSON-RPC code the SDK answers a wrong Content-Type with (no constant of its own). */
const UNSUPPORTED_MEDIA_TYPE = -32000;

function jsonRpcError(status: number, code: number, message: string): McpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null })),
  };
}

export async function createMcpEndpoint(options: McpEndpointOptions): Promise<McpEndpoint> {
  const { envelope } = options;
  const sdk = createSdkPath(envelope);
  const proven = await checkAgainstSdk().catch((error: unknown) => ({
    modern: false,
    legacyVersions: new Set<string>(),
    problems: [`the self-check failed: ${(error as Error).message}`],
  }));
  for (const problem of proven.problems) options.logWarning?.(`MCP fast call not taken for ${problem}`);
  const fast = createFastCall(envelope, proven);

  function viaSdk(request: McpRequest, body: unknown, respond: (response: McpResponse) => void): void {
    sdk.exchange(request, body).then(respond, (error: unknown) => {
      const result = envelope.errorResult(error);
      respond({
        status: result.status,
        headers: { 'content-type': JSON_CONTENT_TYPE, ...result.headers },
        body: Buffer.from(responseJson(result.refusal!.body)),
      });
    });
  }

  function exchange(request: McpRequest, respond: (response: McpResponse) => void): void {
    if (!isJsonContentType(request.headers['content-type'] ?? null)) {
      return respond(
        jsonRpcError(
          415,
          UNSUPPORTED_MEDIA_TYPE,
          'Unsupported Media Type: Content-Type must be application/json',
        ),
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(request.body.toString('utf8'));
    } catch {
      return respond(jsonRpcError(400, PARSE_ERROR, 'Parse error: the request body is not valid JSON'));
    }
    const plain = fast?.recognise(body, request.headers) ?? null;
    if (plain !== null) fast!.run(request, plain, respond);
    else viaSdk(request, body, respond);
  }

  return { exchange, close: () => sdk.close() };
}
