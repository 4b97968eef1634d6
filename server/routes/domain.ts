/** GET /v1/domain/{domain}/history and /hosting: thin adapters over the query layer. */
import { PagedQuery } from '../../shared/api-schemas.js';
import { domainHistory, domainHosting } from '../../shared/queries/index.js';
import { pageLimit } from '../page-size.js';
import { parseQuery } from '../query-params.js';
import { sendJson } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

export function registerDomainRoutes(ctx: RouteContext): void {
  getRoute(ctx, '/v1/domain/:domain/history', 'key', (request, reply) => {
    const { domain } = request.params as { domain: string };
    const query = parseQuery(PagedQuery, request.query);
    const body = domainHistory(ctx.releases.current(), {
      domain,
      limit: pageLimit(request.principal, query.limit),
      cursor: query.cursor,
    });
    return sendJson(reply, body);
  });

  getRoute(ctx, '/v1/domain/:domain/hosting', 'key', (request, reply) => {
    const { domain } = request.params as { domain: string };
    return sendJson(reply, domainHosting(ctx.releases.current(), { domain }));
  });
}
