/**
 * The fast `tools/call` (docs/decisions/0009): a plain call of one of the five tools, in the shape
 * the SDK's clients send it, runs through the call envelope and is answered with the bytes the SDK
 * would send (server/encoding/mcp-result.ts), its answer or its refusal alike, without building a
 * Web Request, an McpServer or a Response. Anything else goes to the SDK (sdk.ts).
 *
 * Plain: one JSON-RPC request `{jsonrpc, id, method: "tools/call", params: {name, arguments?,
 * _meta?}}` with a string or safe-integer id and an object of arguments, Accept listing both media
 * types, and
 * - 2026-07-28: the MCP-Protocol-Version header and the `_meta` claim of that revision, Mcp-Method
 *   and Mcp-Name matching, client info and capabilities in `_meta`, nothing else there;
 * - 2025 era: no `_meta`, and an MCP-Protocol-Version the SDK answers as we do (or none).
 * The versions come from the start-up self-check (checkAgainstSdk), which runs before the server
 * listens.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  DEFAULT_NEGOTIATED_PROTOCOL_VERSION,
  JSONRPC_VERSION,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';
import type { IncomingHttpHeaders } from 'node:http';
import { operationById, type Operation } from '../../shared/operations.js';
import type { Envelope } from '../call/envelope.js';
import { bearerToken } from '../call/keys.js';
import { MODERN_REVISION } from '../encoding/mcp-era.js';
import { toolErrorChunks, toolResultChunks, type SelfCheck } from '../encoding/mcp-result.js';
import type { McpRequest, McpResponse } from './exchange.js';

/** A plain call, as recognised. */
export interface PlainToolCall {
  modern: boolean;
  id: string | number;
  tool: Operation;
  args: unknown;
}

/** The text of a refused call: `Error executing tool <tool>: <error code>: <message>`. */
export function refusalText(tool: string, code: string, message: string): string {
  return `Error executing tool ${tool}: ${code}: ${message}`;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const BODY_KEYS: ReadonlySet<string> = new Set(['jsonrpc', 'id', 'method', 'params']);
const PARAMS_KEYS: ReadonlySet<string> = new Set(['name', 'arguments', '_meta']);
const META_KEYS: ReadonlySet<string> = new Set([
  PROTOCOL_VERSION_META_KEY,
  CLIENT_INFO_META_KEY,
  CLIENT_CAPABILITIES_META_KEY,
]);

/** True when every own key of `object` is in `allowed` (no rest object built per request). */
function onlyKeys(object: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const key in object) if (Object.hasOwn(object, key) && !allowed.has(key)) return false;
  return true;
}

export interface FastCall {
  /** The plain call a POST carries, or null (the SDK's). */
  recognise(body: unknown, headers: IncomingHttpHeaders): PlainToolCall | null;
  /** Runs a plain call; `respond` gets the response once the envelope has the result. */
  run(request: McpRequest, call: PlainToolCall, respond: (response: McpResponse) => void): void;
}

/** The fast call for the versions the self-check proved; null when it proved none. */
export function createFastCall(envelope: Envelope, proven: SelfCheck): FastCall | null {
  if (!proven.modern && proven.legacyVersions.size === 0) return null;
  const legacy = proven.legacyVersions;
  // A 2025-era request without a version header is served as the SDK's default version.
  const legacyWithoutHeader = legacy.has(DEFAULT_NEGOTIATED_PROTOCOL_VERSION);

  function recognise(body: unknown, headers: IncomingHttpHeaders): PlainToolCall | null {
    if (!isObject(body) || !onlyKeys(body, BODY_KEYS)) return null;
    const { jsonrpc, id, method, params } = body;
    if (jsonrpc !== JSONRPC_VERSION || method !== 'tools/call' || !isObject(params)) return null;
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
      if (
        version === undefined ? !legacyWithoutHeader : !(typeof version === 'string' && legacy.has(version))
      )
        return null;
      if (headers['mcp-method'] !== undefined || headers['mcp-name'] !== undefined) return null;
      return { modern: false, id, tool, args };
    }
    if (!proven.modern) return null;
    if (
      version !== MODERN_REVISION ||
      headers['mcp-method'] !== 'tools/call' ||
      headers['mcp-name'] !== name
    ) {
      return null;
    }
    if (!isObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION || !onlyKeys(meta, META_KEYS))
      return null;
    const info = meta[CLIENT_INFO_META_KEY];
    const caps = meta[CLIENT_CAPABILITIES_META_KEY];
    if (!isObject(caps) || !isObject(info)) return null;
    if (typeof info.name !== 'string' || typeof info.version !== 'string') return null;
    return { modern: true, id, tool, args };
  }

  function run(request: McpRequest, call: PlainToolCall, respond: (response: McpResponse) => void): void {
    envelope.call(
      {
        op: call.tool,
        credential: { token: bearerToken(request.headers.authorization), keyInUrl: request.keyInUrl },
        client: request,
        args: { from: 'tool', args: call.args },
      },
      {
        result(result) {
          const refusal = result.refusal;
          respond({
            status: 200,
            // The type first: `{ ...result.headers, 'content-type': … }` takes V8's slow path
            // (0.59 against 0.13 µs for this copy and the writer's, a node loop).
            headers: { 'content-type': 'application/json', ...result.headers },
            body:
              refusal === null
                ? toolResultChunks(result.answer!, call.id, call.modern)
                : toolErrorChunks(
                    refusalText(call.tool.id, refusal.code, refusal.message),
                    call.id,
                    call.modern,
                  ),
          });
        },
      },
    );
  }

  return { recognise, run };
}
