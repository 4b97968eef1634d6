/**
 * Drives wrk (Debian's `wrk`) with a Lua script that cycles through a file of request paths (and,
 * for POST, one body per line), and reads back requests/s and latency percentiles.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface WrkResult {
  requests: number;
  rps: number;
  p50ms: number;
  p99ms: number;
  non2xx: number;
  errors: number;
}

export interface WrkOptions {
  url: string;
  paths: string[];
  /** One JSON body per path (POST) — same length as paths. */
  bodies?: string[];
  headers?: Record<string, string>;
  connections?: number;
  seconds?: number;
  /** CPU to pin wrk to (taskset), so it does not share the server's core. */
  cpu?: number;
  /** wrk threads (default 1). */
  threads?: number;
}

const LUA = `
local paths, bodies = {}, {}
for line in io.lines(os.getenv("WRK_PATHS")) do paths[#paths + 1] = line end
local bodyFile = os.getenv("WRK_BODIES")
if bodyFile and bodyFile ~= "" then
  for line in io.lines(bodyFile) do bodies[#bodies + 1] = line end
end
local headers = {}
local headerFile = os.getenv("WRK_HEADERS")
for line in io.lines(headerFile) do
  local k, v = line:match("^([^:]+): (.*)$")
  if k then headers[k] = v end
end
local i = 0
request = function()
  i = i + 1
  if i > #paths then i = 1 end
  if #bodies > 0 then return wrk.format("POST", paths[i], headers, bodies[i]) end
  return wrk.format("GET", paths[i], headers)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"errors":%d,"non2xx":%d,"p50_us":%d,"p99_us":%d}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
`;

export async function runWrk(options: WrkOptions): Promise<WrkResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'wrk-'));
  try {
    const script = path.join(dir, 'script.lua');
    fs.writeFileSync(script, LUA);
    fs.writeFileSync(path.join(dir, 'paths'), options.paths.join('\n') + '\n');
    if (options.bodies) fs.writeFileSync(path.join(dir, 'bodies'), options.bodies.join('\n') + '\n');
    fs.writeFileSync(
      path.join(dir, 'headers'),
      Object.entries(options.headers ?? {})
        .map(([k, v]) => `${k}: ${v}\n`)
        .join(''),
    );
    const args = [
      `-t${options.threads ?? 1}`,
      `-c${options.connections ?? 50}`,
      `-d${options.seconds ?? 10}s`,
      '--timeout',
      '5s',
      '-s',
      script,
      options.url,
    ];
    const [cmd, cmdArgs] =
      options.cpu !== undefined ? ['taskset', ['-c', String(options.cpu), 'wrk', ...args]] : ['wrk', args];
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(cmd, cmdArgs as string[], {
        env: {
          ...process.env,
          WRK_PATHS: path.join(dir, 'paths'),
          WRK_BODIES: options.bodies ? path.join(dir, 'bodies') : '',
          WRK_HEADERS: path.join(dir, 'headers'),
        },
      });
      let text = '';
      child.stdout.on('data', (d: Buffer) => (text += d.toString()));
      child.stderr.on('data', (d: Buffer) => (text += d.toString()));
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}:\n${text}`)),
      );
    });
    const m = /WRKJSON (\{.*\})/.exec(out);
    if (!m) throw new Error(`no result from wrk:\n${out}`);
    const r = JSON.parse(m[1]!) as {
      requests: number;
      duration_us: number;
      errors: number;
      non2xx: number;
      p50_us: number;
      p99_us: number;
    };
    return {
      requests: r.requests,
      rps: r.requests / (r.duration_us / 1e6),
      p50ms: r.p50_us / 1000,
      p99ms: r.p99_us / 1000,
      non2xx: r.non2xx,
      errors: r.errors,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Median and spread of repeated measurements. */
/** `median (min–max)` of summarize()'s result, with `digits` decimals: the cell of every bench table. */
export function spread(s: { median: number; min: number; max: number }, digits = 0): string {
  return `${s.median.toFixed(digits)} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
}

export function summarize(xs: number[]): { median: number; min: number; max: number } {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]! };
}
