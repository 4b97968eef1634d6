/**
 * The two Web-standard objects the SDK's HTTP entry points take and give, at lower cost than a
 * full conversion (NOTES.md: Web Request/Response conversion is a large share of a tools/call):
 *
 * - `sdkRequest`: the SDK reads only `method`, `url`, `headers.get()` and `signal` of a request
 *   whose body it receives already parsed (`parsedBody`), so a plain object with a `Headers` of the
 *   headers it reads stands in for an undici `Request` (whose constructor costs ~50 µs).
 * - `responseBytes`: a JSON `Response` built by the SDK holds its bytes in undici's internal state;
 *   reading them there skips the Web stream that `arrayBuffer()` drains (~60 µs for 10 KB). When the
 *   state is not where this expects it (another Node version), it falls back to `arrayBuffer()`.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** The request headers the SDK reads: media types, the MCP-* family, Last-Event-ID. */
function sdkHeaders(headers: IncomingHttpHeaders): Headers {
  const out = new Headers();
  for (const name in headers) {
    if (name !== 'content-type' && name !== 'accept' && name !== 'last-event-id' && !name.startsWith('mcp-'))
      continue;
    const value = headers[name];
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) out.append(name, v);
    else out.set(name, value);
  }
  return out;
}

export function sdkRequest(url: string, headers: IncomingHttpHeaders): Request {
  const view = {
    method: 'POST',
    url,
    headers: sdkHeaders(headers),
    signal: undefined,
    clone(): never {
      throw new Error('the MCP request body is passed parsed; it cannot be read again');
    },
  };
  return view as unknown as Request;
}

let stateSymbol: symbol | null | undefined;

function undiciState(response: Response): { body?: { source?: unknown } } | undefined {
  if (stateSymbol === undefined) {
    stateSymbol = Object.getOwnPropertySymbols(response).find((s) => s.description === 'state') ?? null;
  }
  return stateSymbol === null
    ? undefined
    : ((response as unknown as Record<symbol, { body?: { source?: unknown } }>)[stateSymbol] ?? undefined);
}

export async function responseBytes(response: Response): Promise<Buffer> {
  const source = undiciState(response)?.body?.source;
  if (source instanceof Uint8Array && !response.bodyUsed) {
    return Buffer.from(source.buffer, source.byteOffset, source.byteLength);
  }
  if (typeof source === 'string' && !response.bodyUsed) return Buffer.from(source);
  return Buffer.from(await response.arrayBuffer());
}
