/**
 * One log line per request: request id (pino's `reqId`), method, URL with key-like query
 * parameters redacted, status and time in milliseconds. Headers are never logged, so neither is
 * the Authorization header.
 */
import { redactUrl } from './redact.js';

export function requestLine(reqId: string, method: string, url: string, statusCode: number, started: number) {
  return {
    reqId,
    method,
    url: redactUrl(url),
    statusCode,
    responseTime: Math.round((performance.now() - started) * 10) / 10,
  };
}
