/**
 * The two MCP protocol eras as the SDK (`@modelcontextprotocol/server`) serves them
 * (docs/decisions/0006): the 2025 era (a client opens with `initialize`; its versions are the SDK's
 * SUPPORTED_PROTOCOL_VERSIONS) and the 2026-07-28 era (a protocol version on every request, in the
 * MCP-Protocol-Version header and the `_meta` claim, with Mcp-Method and Mcp-Name headers).
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  JSONRPC_VERSION,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';

/**
 * The 2026-07-28 revision. The SDK (2.4.0) serves it but exports no constant for it (its
 * SUPPORTED_PROTOCOL_VERSIONS lists the 2025 era only): this is the one place it is written, and
 * the start-up self-check (mcp-result.ts checkAgainstSdk) proves the SDK answers it as we do.
 */
export const MODERN_REVISION = '2026-07-28';

/** A 2026-07-28 `tools/call` as the SDK's clients send it: the message and its headers. */
export function modernToolCall(
  tool: string,
  args: Record<string, unknown>,
  id: string | number,
): { body: object; headers: Record<string, string> } {
  return {
    body: {
      jsonrpc: JSONRPC_VERSION,
      id,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: args,
        _meta: {
          [PROTOCOL_VERSION_META_KEY]: MODERN_REVISION,
          [CLIENT_INFO_META_KEY]: { name: 'self-check', version: '1.0.0' },
          [CLIENT_CAPABILITIES_META_KEY]: {},
        },
      },
    },
    headers: { 'mcp-protocol-version': MODERN_REVISION, 'mcp-method': 'tools/call', 'mcp-name': tool },
  };
}
