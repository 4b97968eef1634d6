/**
 * GET /v1/openapi.json (no key; built once) and GET /llms-full.txt (the guide for agents, naming
 * this deployment's base URL, from the request's Host and scheme, and the size of the release
 * served; built again only when either changes).
 */
import fs from 'node:fs';
import { llmsGuidePath, renderGuide } from '../../api-docs/guide.js';
import { buildOpenApiDocument } from '../../api-docs/openapi.js';
import { JSON_CONTENT_TYPE } from '../../encoding/json.js';
import type { ReleaseSource } from '../../releases/store.js';
import type { Exchange } from '../exchange.js';
import type { RouteSpec } from '../router.js';

const CACHED = 'public, max-age=300';

/** A plain host[:port]; anything else is not echoed into the guide. */
const PLAIN_HOST = /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/;

export function docsRoutes(releases: ReleaseSource): RouteSpec[] {
  const openapi = JSON.stringify(buildOpenApiDocument());
  const template = fs.readFileSync(llmsGuidePath(), 'utf8');
  let last: { key: string; text: string } | null = null;
  const guideFor = (ex: Exchange): string => {
    const host = ex.host();
    const baseUrl = `${ex.protocol()}://${PLAIN_HOST.test(host) ? host : 'localhost'}`;
    const release = releases.current();
    const key = `${baseUrl} ${release?.id ?? ''}`;
    if (last?.key !== key)
      last = { key, text: renderGuide({ baseUrl, coverage: release?.coverage ?? null }, template) };
    return last.text;
  };
  return [
    {
      path: '/v1/openapi.json',
      method: 'GET',
      access: 'browser',
      handler: (ex) => ex.write(200, JSON_CONTENT_TYPE, { 'cache-control': CACHED }, openapi),
    },
    {
      path: '/llms-full.txt',
      method: 'GET',
      access: 'public',
      handler: (ex) => ex.write(200, 'text/plain; charset=utf-8', { 'cache-control': CACHED }, guideFor(ex)),
    },
  ];
}
