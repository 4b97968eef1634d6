/**
 * POST /mcp on the Fastify app (SPEC.md "MCP server: POST /mcp"): only POST (other methods 405
 * `{detail: "Method Not Allowed"}`, `Allow: POST`), browser origins other than the console refused
 * with 403 (the same hook as /v1), a body over 1 MiB answered 413 `{error: "payload_too_large"}`
 * before it is read to the end, then one exchange of server/mcp/handler.ts.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../shared/errors.js';
import type { AccountsPort } from '../auth.js';
import type { Envelope } from '../call/envelope.js';
import { MCP_ALLOWED_HEADERS, answerPreflight, browserOriginHook } from '../http/origin.js';
import { errorHandler, methodNotAllowed } from '../error-handler.js';
import type { RefusedKeyThrottle } from '../limits/refused-keys.js';
import { hasKeyInQuery, urlCarriesKey } from '../http/redact.js';
import { sendJson } from '../send-json.js';
import { chunksBuffer } from '../encoding/chunks.js';
import { createMcpEndpoint, type McpEndpoint } from './handler.js';
import { MCP_PATH } from './path.js';

export { MCP_PATH };
/** SPEC.md Limits: request body at most 1 MiB. */
export const MCP_BODY_LIMIT = 1024 * 1024;

export interface McpRouteOptions {
  /** The call envelope every transport shares (key, parameters, lookup, metering). */
  envelope: Envelope;
  accounts: AccountsPort;
  /** The refused-key throttle of /v1 (SPEC.md Authentication 7); none: not throttled. */
  refusedKeys?: RefusedKeyThrottle;
  /** The console's origin, the only browser origin allowed (null: none). */
  consoleOrigin: string | null;
  /** false: every exchange through the SDK (FAST_LANE=off); default true. */
  fastPath?: boolean;
}

/** Registers POST /mcp; returns its endpoint (the fast lane calls it too, server/fast-lane.ts). */
export function registerMcpRoute(app: FastifyInstance, options: McpRouteOptions): McpEndpoint {
  const endpoint = createMcpEndpoint({
    fastPath: options.fastPath !== false,
    envelope: options.envelope,
    accounts: options.accounts,
    ...(options.refusedKeys && { refusedKeys: options.refusedKeys }),
    logWarning: (message) => app.log.warn(message),
  });
  const originHook = browserOriginHook(options.consoleOrigin);

  app.register(async (scope) => {
    // The body is handed to the MCP layer as bytes, whatever its type: it answers a non-JSON type
    // with 415 and bad JSON with a JSON-RPC parse error, as the SDK does.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: MCP_BODY_LIMIT },
      (_request, body, done) => done(null, body),
    );

    scope.route({
      method: 'POST',
      url: MCP_PATH,
      bodyLimit: MCP_BODY_LIMIT,
      onRequest: [originHook],
      errorHandler: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
        if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.statusCode === 413) {
          return sendJson(reply, new ApiError('payload_too_large').toBody(), 413);
        }
        return errorHandler(error, request, reply);
      },
      handler: async (request, reply) => {
        const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const response = await endpoint.handle({
          url: `http://${request.host}${request.url}`,
          headers: request.headers,
          body,
          keyInUrl: hasKeyInQuery(request.query) || urlCarriesKey(request.url),
          clientAddress: request.ip,
        });
        reply.code(response.status).headers(response.headers);
        const sent = response.body;
        return reply.send(Buffer.isBuffer(sent) ? sent : chunksBuffer(sent));
      },
    });

    const refuse = async (request: FastifyRequest, reply: FastifyReply) => {
      if (!answerPreflight(request, reply, 'POST', MCP_ALLOWED_HEADERS)) methodNotAllowed(reply, 'POST');
      return reply;
    };
    scope.route({
      method: scope.supportedMethods.filter((m) => m !== 'POST'),
      url: MCP_PATH,
      onRequest: [originHook, refuse],
      handler: async () => undefined,
    });
  });
  app.addHook('onClose', async () => endpoint.close());
  return endpoint;
}
