/**
 * GET /v1/openapi.json (no key; built once) and GET /llms-full.txt (the guide for agents, naming
 * this deployment's base URL, from the request's Host and scheme, and the size of the release
 * served; built again only when either changes).
 */
import fs from 'node:fs';
import type { FastifyRequest } from 'fastify';
import { llmsGuidePath, renderGuide } from '../api-docs/guide.js';
import { buildOpenApiDocument } from '../api-docs/openapi.js';
import { JSON_CONTENT_TYPE } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

export function registerDocsRoutes(ctx: RouteContext): void {
  const openapi = JSON.stringify(buildOpenApiDocument());
  const template = fs.readFileSync(llmsGuidePath(), 'utf8');
  let last: { key: string; text: string } | null = null;
  const guideFor = (request: FastifyRequest): string => {
    // A Host that is not a plain host[:port] is not echoed into the guide.
    const host = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(request.host)
      ? request.host
      : 'localhost';
    const baseUrl = `${request.protocol}://${host}`;
    const release = ctx.releases.current();
    const key = `${baseUrl} ${release?.id ?? ''}`;
    if (last?.key !== key)
      last = { key, text: renderGuide({ baseUrl, coverage: release?.coverage ?? null }, template) };
    return last.text;
  };
  getRoute(ctx, '/v1/openapi.json', 'browser', (_request, reply) =>
    reply.type(JSON_CONTENT_TYPE).header('cache-control', 'public, max-age=300').send(openapi),
  );
  getRoute(ctx, '/llms-full.txt', 'public', (request, reply) =>
    reply
      .type('text/plain; charset=utf-8')
      .header('cache-control', 'public, max-age=300')
      .send(guideFor(request)),
  );
}
