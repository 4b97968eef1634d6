/** Where MCP is served (docs/api.md#post-mcp); its own file so the HTTP stack needs no MCP code to name it. */
export const MCP_PATH = '/mcp';
