/** GET /v1/asn/{asn}: a thin adapter over the query layer. */
import { PagedQuery } from '../../shared/api-schemas.js';
import { lookupAsn } from '../../shared/queries/index.js';
import { pageLimit } from '../page-size.js';
import { parseQuery } from '../query-params.js';
import { sendJson } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

export function registerAsnRoutes(ctx: RouteContext): void {
  getRoute(ctx, '/v1/asn/:asn', 'key', (request, reply) => {
    const { asn } = request.params as { asn: string };
    const query = parseQuery(PagedQuery, request.query);
    const body = lookupAsn(ctx.releases.current(), {
      asn,
      limit: pageLimit(request.principal, query.limit),
      cursor: query.cursor,
    });
    return sendJson(reply, body);
  });
}
