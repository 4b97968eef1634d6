/**
 * MCP `tools/call lookup_ip` under load against REST `GET /v1/ip/{ip}` on the same IPs, in the same
 * run: the 2026-07-28 era (protocol version, Mcp-Method/Mcp-Name headers and `_meta` on every
 * request) and the 2025 era (a stateless JSON-mode server answers tools/call without a prior
 * initialize). wrk with 50 connections, server and wrk on separate cores.
 *
 * Beside them, the same three against the bare node:http server (bare-http-server.ts) sending the
 * bytes the server sent for the first BARE_SAMPLE of the IPs, a POST's answer picked by its body:
 * what the transport alone makes of the MCP exchange's larger request and answer. Its ratio is the
 * one the server would have if its own work cost nothing.
 *
 * `benchToolsCall()` is called by bench-api.ts on its server; run alone it serves a release itself
 * (default: the demo release, a small one: say so next to the figures):
 *
 *   node dist/test/bench/bench-mcp.js [--releases <dir>] [--seconds 10] [--runs 3]
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { openRelease } from '../../shared/queries/index.js';
import { startNode, stop } from './processes.js';
import { BARE_SERVER, capturedLine } from './captured.js';
import { runWrk, spread, summarize, type WrkResult } from './wrk.js';

export const MODERN_VERSION = '2026-07-28';
export const LEGACY_VERSION = '2025-06-18';

export interface ToolsCallBenchOptions {
  /** Base URL of a running server, e.g. http://127.0.0.1:8080. */
  base: string;
  /** A valid key. */
  key: string;
  ips: string[];
  seconds: number;
  runs: number;
  connections: number;
  /** CPU for wrk (the server runs on another). */
  cpu?: number;
  /** CPU of the server, where the bare baseline runs too. */
  serverCpu?: number;
  log?: (line: string) => void;
}

export interface ScenarioResult {
  name: string;
  runs: WrkResult[];
  /** The bare node:http server sending the same bytes, run by run. */
  bare: WrkResult[];
}

/** Requests of each scenario whose answers the bare baseline sends (enough for the load generator to cycle through). */
const BARE_SAMPLE = 2000;

interface Scenario {
  name: string;
  paths: string[];
  bodies?: string[];
  headers: Record<string, string>;
}

function toolsCallBody(ip: string, id: number, era: 'modern' | 'legacy'): string {
  const params: Record<string, unknown> = { name: 'lookup_ip', arguments: { ip } };
  if (era === 'modern') {
    params._meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientInfo': { name: 'bench-mcp', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
  }
  return JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });
}

export function toolsCallScenarios(key: string, ips: string[]): Scenario[] {
  const auth = { authorization: `Bearer ${key}` };
  const post = {
    ...auth,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  return [
    { name: 'REST GET /v1/ip/{ip}', paths: ips.map((ip) => `/v1/ip/${ip}`), headers: auth },
    {
      name: `MCP tools/call lookup_ip (${MODERN_VERSION})`,
      paths: ips.map(() => '/mcp'),
      bodies: ips.map((ip, i) => toolsCallBody(ip, i + 1, 'modern')),
      headers: {
        ...post,
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'tools/call',
        'mcp-name': 'lookup_ip',
      },
    },
    {
      name: `MCP tools/call lookup_ip (${LEGACY_VERSION}, no initialize)`,
      paths: ips.map(() => '/mcp'),
      bodies: ips.map((ip, i) => toolsCallBody(ip, i + 1, 'legacy')),
      headers: { ...post, 'mcp-protocol-version': LEGACY_VERSION },
    },
  ];
}

/**
 * Captures the server's answers to the first BARE_SAMPLE requests of each scenario into `file`,
 * checking each (200, and a tool result for a call) before anything is measured.
 */
async function capture(base: string, scenarios: Scenario[], file: string): Promise<void> {
  const out = fs.createWriteStream(file);
  for (const s of scenarios) {
    for (let i = 0; i < Math.min(s.paths.length, BARE_SAMPLE); i++) {
      const body = s.bodies?.[i];
      const method = body === undefined ? 'GET' : 'POST';
      const r = await request(base + s.paths[i]!, {
        method,
        headers: s.headers,
        ...(body !== undefined && { body }),
      });
      const text = await r.body.text();
      if (r.statusCode !== 200 || (body !== undefined && !text.includes('"structuredContent"'))) {
        throw new Error(`${s.name} ${s.paths[i]} ${body ?? ''}: ${r.statusCode} ${text.slice(0, 300)}`);
      }
      out.write(capturedLine(method, s.paths[i]!, r.statusCode, r.headers, text, body));
    }
  }
  await new Promise((resolve) => out.end(resolve));
}

export async function benchToolsCall(options: ToolsCallBenchOptions): Promise<ScenarioResult[]> {
  const log = options.log ?? ((line: string) => console.log(line));
  const scenarios = toolsCallScenarios(options.key, options.ips);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mcp-bare-'));
  const captured = path.join(work, 'responses.ndjson');
  await capture(options.base, scenarios, captured);
  const bare = await startNode([BARE_SERVER, captured], options.serverCpu);
  const results = scenarios.map((s) => ({ name: s.name, runs: [] as WrkResult[], bare: [] as WrkResult[] }));
  const load = async (url: string, s: Scenario, sample: number) => {
    const r = await runWrk({
      url,
      paths: s.paths.slice(0, sample),
      ...(s.bodies && { bodies: s.bodies.slice(0, sample) }),
      headers: s.headers,
      connections: options.connections,
      seconds: options.seconds,
      ...(options.cpu !== undefined && { cpu: options.cpu }),
    });
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${s.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
    return r;
  };
  try {
    for (let run = 1; run <= options.runs; run++) {
      for (const [i, s] of scenarios.entries()) {
        const r = await load(options.base, s, s.paths.length);
        results[i]!.runs.push(r);
        log(`run ${run}/${options.runs} ${s.name}: ${r.rps.toFixed(0)} req/s`);
      }
      for (const [i, s] of scenarios.entries()) {
        const r = await load(`http://127.0.0.1:${bare.port}`, s, BARE_SAMPLE);
        results[i]!.bare.push(r);
        log(`run ${run}/${options.runs} bare node:http, ${s.name}: ${r.rps.toFixed(0)} req/s`);
      }
    }
  } finally {
    await stop(bare.child);
    fs.rmSync(work, { recursive: true, force: true });
  }
  return results;
}

/**
 * Each scenario's ratio to bare node:http sending its bytes, divided by REST's, run by run: what the
 * MCP exchange keeps of REST's per-core rate once the transport's own cost of the larger request
 * and answer is taken out (the form of issue 18's MCP target, MCP_TARGET).
 */
export function againstBare(r: ScenarioResult, rest: ScenarioResult): number[] {
  return r.runs.map((x, i) => x.rps / r.bare[i]!.rps / (rest.runs[i]!.rps / rest.bare[i]!.rps));
}

/**
 * Issue 18: a tools/call's ratio to bare node:http sending the same bytes at least 0.8 of REST's.
 * (Read as MCP req/s against REST req/s, the bare transport itself stays under 0.8 in both eras:
 * medians 0.68–0.73 and 0.72–0.80 in the full runs of 2026-11-26, docs/performance.md
 * and docs/performance-log.md.)
 */
export const MCP_TARGET = 0.8;

/**
 * Markdown table: req/s, ratio to the first scenario (REST) run by run, the bare node:http server's
 * ratio for the same bytes, the two against each other (againstBare), latency; medians (min–max).
 */
export function toolsCallTable(results: ScenarioResult[]): string[] {
  const rest = results[0]!;
  const lines = [
    '| Scenario | req/s | Ratio to REST | bare node:http, same bytes: ratio | Ratio to REST, each against its bare node:http | p50 ms | p99 ms |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const ratio = summarize(r.runs.map((x, i) => x.rps / rest.runs[i]!.rps));
    const bareRatio = summarize(r.bare.map((x, i) => x.rps / rest.bare[i]!.rps));
    lines.push(
      `| ${r.name} | ${spread(summarize(r.runs.map((x) => x.rps)))} | ${spread(ratio, 2)} | ${spread(bareRatio, 2)} | ${spread(summarize(againstBare(r, rest)), 2)} | ${spread(summarize(r.runs.map((x) => x.p50ms)), 2)} | ${spread(summarize(r.runs.map((x) => x.p99ms)), 2)} |`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Standalone run

/** The bench key is on the Free plan: lift its limits so that the meter counts but never refuses. */
function startServer(args: string[], cpu: number | undefined) {
  return startNode(args, cpu, {
    FREE_REQUESTS_PER_MINUTE: '1000000000',
    FREE_MONTHLY_QUOTA: '1000000000000',
  });
}

async function main(): Promise<void> {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  const { values } = parseArgs({
    options: {
      releases: { type: 'string' },
      seconds: { type: 'string', default: '10' },
      runs: { type: 'string', default: '3' },
      connections: { type: 'string', default: '50' },
      sample: { type: 'string', default: '2000' },
      'node-args': { type: 'string', default: '' },
    },
  });
  let releasesDir = values.releases;
  if (releasesDir === undefined) {
    const { demoReleasesDir } = await import('../helpers/demo-release.js');
    releasesDir = demoReleasesDir();
    console.log(`release: the demo release (${releasesDir}), a small one`);
  }
  const current = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim();
  const release = openRelease(path.join(releasesDir, current));
  const ips = release.db
    .prepare(`SELECT value FROM ip_summary ORDER BY value LIMIT ?`)
    .pluck()
    .all(Number(values.sample)) as string[];
  release.close();

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-mcp-'));
  const accounts = path.join(work, 'accounts.sqlite');
  const server = path.join(root, 'bin/server.js');
  const created = spawnSync(
    process.execPath,
    [server, '--accounts-db', accounts, 'keys', 'create', '--project', 'bench', '--label', 'bench'],
    { encoding: 'utf8' },
  );
  const key = /\bsk_[A-Za-z0-9]+/.exec(created.stdout)?.[0];
  if (!key) throw new Error(`could not create a key:\n${created.stdout}${created.stderr}`);
  const pin = os.availableParallelism() >= 2;
  const nodeArgs = values['node-args'] ? values['node-args'].split(' ') : [];
  const { child, port } = await startServer(
    [
      ...nodeArgs,
      server,
      '--accounts-db',
      accounts,
      'serve',
      '--workers',
      '1',
      '--port',
      '0',
      '--releases-dir',
      releasesDir,
      '--log-level',
      'warn',
    ],
    pin ? 0 : undefined,
  );
  try {
    const results = await benchToolsCall({
      base: `http://127.0.0.1:${port}`,
      key,
      ips,
      seconds: Number(values.seconds),
      runs: Number(values.runs),
      connections: Number(values.connections),
      ...(pin && { cpu: 1, serverCpu: 0 }),
    });
    console.log(
      `\n${values.runs} runs of ${values.seconds} s, ${values.connections} connections, ${ips.length} IPs, one server process${pin ? ' on CPU 0, wrk on CPU 1' : ''}; medians (min–max)`,
    );
    for (const line of toolsCallTable(results)) console.log(line);
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    await exited;
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
