/**
 * Sends a body as a pre-serialised JSON string: faster than Fastify's object path (NOTES.md); a
 * lookup's release blocks are serialised once per release (responseJson).
 */
import type { FastifyReply } from 'fastify';
import { responseJson } from './encoding/json.js';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendJson(reply: FastifyReply, body: unknown, status = 200): FastifyReply {
  return reply
    .code(status)
    .type(JSON_CONTENT_TYPE)
    .send(responseJson(body as object));
}
