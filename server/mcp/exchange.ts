/** One POST /mcp exchange as the MCP parts see it, whatever carried it (server/mcp/route.ts). */
import type { IncomingHttpHeaders } from 'node:http';
import type { BodyChunks } from '../encoding/chunks.js';

export interface McpRequest {
  /** The request URL, absolute (the SDK reads it). */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The raw body (at most the route's body limit). */
  readonly body: Buffer;
  /** True when the URL carries a key (by name or by shape): refused 401 like on REST. */
  readonly keyInUrl: boolean;
  /** The client's address, for the refused-key throttle. */
  clientAddress(): string | undefined;
}

export interface McpResponse {
  status: number;
  headers: Record<string, string>;
  /** The body, or its pieces in order (a fast-call result: written as they are, in one writev). */
  body: Buffer | BodyChunks;
}
