/**
 * The keyed operations of the REST API, one GET route each, generated from the operation table
 * (shared/operations.ts). A route is transport only: the key check (an onRequest hook, before any
 * parameter), then the call envelope (server/call/envelope.ts), then the outcome written as JSON
 * with its limit headers.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OPERATIONS, routePath, type Operation } from '../../shared/operations.js';
import { isPending, type CallOutcome, type Envelope } from '../call/envelope.js';
import { jsonText, responseJson } from '../encoding/json.js';
import { JSON_CONTENT_TYPE } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

export function registerOperationRoutes(ctx: RouteContext, envelope: Envelope): void {
  for (const op of OPERATIONS) {
    getRoute(ctx, routePath(op), 'key', (request, reply) => handle(envelope, op, request, reply));
  }
}

function handle(envelope: Envelope, op: Operation, request: FastifyRequest, reply: FastifyReply) {
  const params = request.params as Record<string, string>;
  const outcome = envelope.call(
    op,
    { principal: request.principal! },
    { from: 'rest', path: op.pathParameter ? params[op.pathParameter] : undefined, query: request.query },
  );
  return isPending(outcome) ? outcome.then((o) => send(reply, o!)) : send(reply, outcome!);
}

/** Writes the outcome once its unit is settled (the counters have it before the client hears). */
async function send(reply: FastifyReply, outcome: CallOutcome): Promise<FastifyReply> {
  await outcome.settled;
  reply.code(outcome.status).headers(outcome.headers).type(JSON_CONTENT_TYPE);
  if (outcome.answer !== null) return reply.send(jsonText(outcome.answer.json));
  return reply.send(responseJson(outcome.refusal!.body));
}
