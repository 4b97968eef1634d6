/** GET /v1/ip/{ip} and GET /v1/ip/{ip}/domains: thin adapters over the query layer. */
import { IpDomainsQuery } from '../../shared/api-schemas.js';
import { ipDomains, jsonText, lookupIpAnswer } from '../../shared/queries/index.js';
import { pageLimit } from '../page-size.js';
import { parseQuery } from '../query-params.js';
import { JSON_CONTENT_TYPE, sendJson } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

export function registerIpRoutes(ctx: RouteContext): void {
  getRoute(ctx, '/v1/ip/:ip', 'key', (request, reply) => {
    const { ip } = request.params as { ip: string };
    const answer = lookupIpAnswer(ctx.releases.current(), { ip });
    // A bogon answers from the built-in table and is not counted (SPEC.md GET /v1/ip/{ip}).
    if (answer.isBogon) request.billable = false;
    return reply.code(200).type(JSON_CONTENT_TYPE).send(jsonText(answer));
  });

  getRoute(ctx, '/v1/ip/:ip/domains', 'key', (request, reply) => {
    const { ip } = request.params as { ip: string };
    const query = parseQuery(IpDomainsQuery, request.query);
    const body = ipDomains(ctx.releases.current(), {
      ip,
      includeEnded: query.include_ended,
      limit: pageLimit(request.principal, query.limit),
      cursor: query.cursor,
    });
    return sendJson(reply, body);
  });
}
