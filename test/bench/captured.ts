/**
 * Responses captured from the real server for the bare node:http baseline (bare-http-server.ts):
 * one NDJSON line per request, `[method, path, status, headers, body, requestBody?]`.
 */
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The compiled baseline server, beside this module. */
export const BARE_SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'bare-http-server.js');

/**
 * The headers the server sent that the bare server must send too, so that both send the same bytes:
 * all of them but those node:http writes itself (Date, Connection, Keep-Alive, Content-Length).
 */
function sentHeaders(headers: Record<string, string | string[] | undefined>): Array<[string, string]> {
  const own = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
  return Object.entries(headers).filter(
    (entry): entry is [string, string] => !own.has(entry[0]) && typeof entry[1] === 'string',
  );
}

/** One captured exchange as a line of the bare server's file. A POST's body selects its response. */
export function capturedLine(
  method: string,
  requestPath: string,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: string,
  requestBody?: string,
): string {
  const line = [method, requestPath, status, sentHeaders(headers), body];
  return JSON.stringify(requestBody === undefined ? line : [...line, requestBody]) + '\n';
}

/** One line of a captured file, as the baseline servers read it. */
export interface Captured {
  method: string;
  path: string;
  status: number;
  headers: Array<[string, string]>;
  body: string;
  requestBody?: string;
}

/**
 * The lines of a captured file, read one by one: the captured answers of every scenario can pass
 * V8's longest string (512 MiB).
 */
export async function* readCaptured(file: string): AsyncGenerator<Captured> {
  for await (const line of readline.createInterface({
    input: fs.createReadStream(file),
    crlfDelay: Infinity,
  })) {
    if (!line) continue;
    const [method, path, status, headers, body, requestBody] = JSON.parse(line) as [
      string,
      string,
      number,
      Array<[string, string]>,
      string,
      string?,
    ];
    yield requestBody === undefined
      ? { method, path, status, headers, body }
      : { method, path, status, headers, body, requestBody };
  }
}
