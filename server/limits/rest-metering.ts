/**
 * Metering of the REST lookups (the MCP tools call the same Meter from server/mcp/tools.ts). For a
 * request whose key check passed (request.principal set):
 * - preHandler: reserve one unit. A refusal answers 429 / 402 / 503 with the limit headers, before
 *   any parameter is read; the plan's page-size ceiling goes on the principal (page-size.ts).
 * - onSend: an answered lookup (200, and billable: not a bogon lookup_ip) commits the unit; any
 *   other status (400, 410, 422, 500, 503) releases it. Then the limit headers are set, so every
 *   response of a metered call carries them.
 * - onResponse: a reservation still unsettled (the client went away first) is released.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { KeyPrincipal } from '../accounts/index.js';
import type { Meter, Reservation } from '../metering.js';
import { MeterRefusal } from './meter.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The unit reserved for this metered call, until it is committed or released. */
    reservation: Reservation | null;
  }
}

export function registerRestMetering(app: FastifyInstance, meter: Meter): void {
  app.decorateRequest('reservation', null);

  // Callback-style hooks that settle at once on the unmetered routes (MCP, /health, docs), and
  // return a promise only when there is a unit to wait for.
  const reserve = async (request: FastifyRequest, reply: FastifyReply, principal: KeyPrincipal) => {
    try {
      const reservation = await meter.reserve(principal);
      request.reservation = reservation;
      request.principal = { ...principal, maxPageSize: reservation.maxPageSize };
    } catch (error) {
      if (error instanceof MeterRefusal) reply.headers(error.headers);
      throw error;
    }
  };
  app.addHook('preHandler', (request, reply, done) => {
    const principal = request.principal;
    if (principal === null || request.reservation !== null) return done();
    return reserve(request, reply, principal);
  });

  const settle = async (
    request: FastifyRequest,
    reply: FastifyReply,
    reservation: Reservation,
    payload: unknown,
  ) => {
    if (reply.statusCode === 200 && request.billable) await reservation.commit();
    else await reservation.release();
    reply.headers(reservation.headers);
    return payload;
  };
  app.addHook('onSend', (request, reply, payload, done) => {
    const reservation = request.reservation;
    if (reservation === null) return done(null, payload);
    request.reservation = null;
    return settle(request, reply, reservation, payload);
  });

  app.addHook('onResponse', (request, _reply, done) => {
    const reservation = request.reservation;
    if (reservation === null) return done();
    request.reservation = null;
    return reservation.release();
  });
}
