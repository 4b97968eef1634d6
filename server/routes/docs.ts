/** GET /v1/openapi.json (no key) and GET /llms-full.txt (the guide for agents), both built once. */
import { renderGuide } from '../guide.js';
import { buildOpenApiDocument } from '../openapi.js';
import { JSON_CONTENT_TYPE } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

export function registerDocsRoutes(ctx: RouteContext): void {
  const openapi = JSON.stringify(buildOpenApiDocument());
  const guide = renderGuide();
  getRoute(ctx, '/v1/openapi.json', 'browser', (_request, reply) =>
    reply.type(JSON_CONTENT_TYPE).header('cache-control', 'public, max-age=300').send(openapi),
  );
  getRoute(ctx, '/llms-full.txt', 'public', (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=300').send(guide),
  );
}
