/** Raw MCP requests the tests send with undici: the body and headers of one call. */

export const MODERN = '2026-07-28';

/** A 2026-07-28 `tools/call` of `tool` (its `_meta` as a raw client sends it, plus `extraMeta`). */
export function modernToolCall(
  tool: string,
  args: unknown,
  id: string | number = 1,
  extraMeta: Record<string, unknown> = {},
): { body: string; headers: Record<string, string> } {
  return {
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
          ...extraMeta,
        },
      },
    }),
    headers: { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': tool },
  };
}
