/**
 * The server's logger: pino JSON lines in which anything shaped like an API key is replaced by
 * `REDACTED`, whatever field it is in (URL, message, error text, a value a dependency logged).
 * The redaction runs on the serialised line, so no field can slip past it.
 */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { redactLogLine } from '../http/redact.js';

export function createServerLogger(options: LoggerOptions, destination?: DestinationStream): Logger {
  const hooks = { ...options.hooks, streamWrite: redactLogLine };
  return destination === undefined ? pino({ ...options, hooks }) : pino({ ...options, hooks }, destination);
}
