/**
 * The two Web-standard objects the SDK's HTTP entry points take and give, at lower cost than a
 * full conversion (Web Request/Response conversion was measured as a large share of a tools/call
 * through the SDK: ~600–1,000 µs of CPU per call out of the box, docs/decisions/0006):
 *
 * - `sdkRequest`: the SDK reads only `method`, `url`, `headers.get()` and `signal` of a request
 *   whose body it receives already parsed (`parsedBody`), so a plain object with a `Headers` of the
 *   headers it reads stands in for an undici `Request` (whose constructor costs ~50 µs).
 * - `responseBytes`: the body of the SDK's `Response` as bytes, through the public `arrayBuffer()`.
 *   (It used to read undici's internal state to skip the Web stream, ~60 µs for 10 KB; the common
 *   tool calls take the fast path, which builds no Response at all, so that saving was not worth
 *   depending on undici's internals.)
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

export async function responseBytes(response: Response): Promise<Buffer> {
  return Buffer.from(await response.arrayBuffer());
}
