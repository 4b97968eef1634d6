/** GET /v1/openapi.json (no key) and GET /llms-full.txt (the guide for agents), both built once. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../openapi.js';
import { JSON_CONTENT_TYPE } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

/** server/llms-full.txt in the source tree, found from this file or its compiled copy in dist/. */
export function llmsGuidePath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the package root holding server/llms-full.txt');
    dir = parent;
  }
  return path.join(dir, 'server', 'llms-full.txt');
}

export function registerDocsRoutes(ctx: RouteContext): void {
  const openapi = JSON.stringify(buildOpenApiDocument());
  const guide = fs.readFileSync(llmsGuidePath(), 'utf8');

  getRoute(ctx, '/v1/openapi.json', 'browser', (_request, reply) =>
    reply.type(JSON_CONTENT_TYPE).header('cache-control', 'public, max-age=300').send(openapi),
  );
  getRoute(ctx, '/llms-full.txt', 'public', (_request, reply) =>
    reply.type('text/plain; charset=utf-8').header('cache-control', 'public, max-age=300').send(guide),
  );
}
