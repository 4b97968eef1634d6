/**
 * POST /mcp on the one HTTP stack (docs/api.md#post-mcp): only POST (other methods 405
 * `{detail: "Method Not Allowed"}`, `Allow: POST`), browser origins other than the console refused
 * with 403 (the router's origin check, as on /v1), a body over 1 MiB answered 413
 * `{error: "payload_too_large"}` before it is read to its end, then one exchange (dispatch.ts).
 */
import { IncomingMessage } from 'node:http';
import { ApiError } from '../../shared/errors.js';
import type { Exchange } from '../http/exchange.js';
import { hasKeyInQuery, urlCarriesKey } from '../http/redact.js';
import type { RouteSpec } from '../http/router.js';
import { MCP_ALLOWED_HEADERS } from '../http/origin.js';
import type { McpEndpoint } from './dispatch.js';
import { MCP_PATH } from './path.js';

/** The largest request body (docs/api.md#limits). */
export const MCP_BODY_LIMIT = 1024 * 1024;

export function mcpRoute(endpoint: McpEndpoint): RouteSpec {
  return {
    path: MCP_PATH,
    method: 'POST',
    access: 'browser',
    allowedHeaders: MCP_ALLOWED_HEADERS,
    handler: (ex, _params, query) => {
      const keyInUrl = hasKeyInQuery(query) || urlCarriesKey(ex.req.url ?? '');
      readBody(ex, (body) =>
        endpoint.exchange(
          {
            url: `http://${ex.host()}${ex.req.url ?? MCP_PATH}`,
            headers: ex.req.headers,
            body,
            keyInUrl,
            clientAddress: () => ex.clientAddress(),
          },
          (response) => ex.write(response.status, null, response.headers, response.body),
        ),
      );
    },
  };
}

/**
 * The body, at most MCP_BODY_LIMIT bytes (else 413, and it is not read further): taken at once when
 * it is all there (a request sent in one piece, the usual case: no 'data' and 'end' events and none
 * of the stream's process.nextTick hops), else read as a stream. node:http pushes the body that came
 * with the headers right after the 'request' event returns, hence the microtask.
 */
function readBody(ex: Exchange, use: (body: Buffer) => void): void {
  const req = ex.req;
  // A body is node:http's: the front takes bodiless GETs only (server/http/front.ts).
  if (!(req instanceof IncomingMessage)) throw new Error('POST /mcp reached the front');
  const declared = req.headers['content-length'];
  const length = declared === undefined ? null : Number(declared);
  if (length !== null && length > MCP_BODY_LIMIT) return ex.refuse(new ApiError('payload_too_large'));
  queueMicrotask(() => {
    if (length !== null && req.readableLength === length && length > 0) {
      use(req.read() as Buffer);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MCP_BODY_LIMIT) {
        refused = true;
        req.off('data', onData);
        ex.refuse(new ApiError('payload_too_large'));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.on('error', () => {}); // the client went away: nothing to answer
    req.on('end', () => {
      if (!refused) use(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
    });
  });
}
