/**
 * HTTP over a raw TCP socket, for what an HTTP client will not send: malformed request lines,
 * control bytes in headers, oversized headers, bodies that trickle or never end.
 */
import net from 'node:net';

export interface RawResponse {
  /** 0 when nothing parsable came back. */
  status: number;
  headers: Record<string, string>;
  body: string;
  /** Everything the server wrote. */
  raw: Buffer;
  /** The server closed the connection before `timeoutMs`. */
  closed: boolean;
  /** Milliseconds from the first write to the close (or to the timeout). */
  ms: number;
}

/** Parses the first response of `raw` (content-length bodies; enough for the refusals tested). */
export function parseResponse(raw: Buffer): Pick<RawResponse, 'status' | 'headers' | 'body'> {
  const text = raw.toString('latin1');
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return { status: 0, headers: {}, body: '' };
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const length = Number(headers['content-length'] ?? 0);
  const body = raw.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1')).subarray(0, length);
  return { status, headers, body: body.toString('utf8') };
}

export interface RawOptions {
  /** Give up (and destroy the socket) after this many milliseconds; default 10 s. */
  timeoutMs?: number;
  /** Written after the first chunk, each after `everyMs` (a trickling or endless body). */
  more?: { chunks: Array<string | Buffer>; everyMs: number };
  /** Resolve as soon as one complete response arrived (keep-alive requests); default false. */
  untilResponse?: boolean;
  /** Half-close the connection after writing (the server sees the end of the request bytes). */
  end?: boolean;
}

/** Writes `request` on a fresh connection to 127.0.0.1:`port` and collects what comes back. */
export function rawRequest(
  port: number,
  request: string | Buffer,
  options: RawOptions = {},
): Promise<RawResponse> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const started = performance.now();
    let settled = false;
    let trickle: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearInterval(trickle);
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      socket.destroy();
      resolve({ ...parseResponse(raw), raw, closed, ms: performance.now() - started });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      if (options.untilResponse) {
        const parsed = parseResponse(Buffer.concat(chunks));
        const length = Number(parsed.headers['content-length'] ?? 0);
        if (parsed.status !== 0 && Buffer.byteLength(parsed.body) >= length) finish(false);
      }
    });
    socket.on('error', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('connect', () => {
      if (options.end) socket.end(request);
      else socket.write(request);
      const more = options.more;
      if (more === undefined) return;
      let next = 0;
      trickle = setInterval(() => {
        if (next >= more.chunks.length || socket.destroyed) return clearInterval(trickle);
        socket.write(more.chunks[next++]!);
      }, more.everyMs);
    });
  });
}
