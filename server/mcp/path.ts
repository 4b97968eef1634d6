/** Where MCP is served (SPEC.md "MCP server: POST /mcp"); its own file so the key hook needs no MCP code. */
export const MCP_PATH = '/mcp';
