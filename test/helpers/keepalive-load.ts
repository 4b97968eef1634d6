/**
 * A keep-alive load client for the reliability tests: `connections` workers, each on a kept-alive
 * node:http connection (no retries of its own), sending GETs in a loop until stopped. It behaves as
 * docs/api.md#errors asks of a client behind a load balancer: a 503 is retried on the next server
 * of `servers` (after its Retry-After in real life; at once here), and after a response that says
 * `Connection: close` the worker moves on to the next server. A network error (reset, refused) or
 * any other status is a failed request.
 */
import http from 'node:http';

export interface LoadOptions {
  /** Base URLs in failover order (http://127.0.0.1:port). */
  servers: string[];
  /** Paths asked in turn. */
  paths: string[];
  key: string;
  connections: number;
  /** Sees every 200 body (e.g. to check the release id). */
  onAnswer?: (body: string, server: number, worker: number) => void;
}

export interface LoadResult {
  /** Requests answered 200. */
  ok: number;
  /** 503 answers, each retried on the next server. */
  retried: number;
  /** Responses that said Connection: close (the worker moved on). */
  closeHeaders: number;
  /** Failed requests: what happened, for the assertion message. */
  failures: string[];
  /** 200s per server. */
  perServer: number[];
}

export interface Load {
  /** The figures so far. */
  result: LoadResult;
  /** Stops the workers after their current request; the final figures. */
  stop(): Promise<LoadResult>;
}

interface Answer {
  status: number;
  close: boolean;
  body: string;
}

function get(url: string, agent: http.Agent, key: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          close: /\bclose\b/i.test(String(res.headers.connection ?? '')),
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    request.on('error', reject);
  });
}

export function startLoad(options: LoadOptions): Load {
  const result: LoadResult = {
    ok: 0,
    retried: 0,
    closeHeaders: 0,
    failures: [],
    perServer: options.servers.map(() => 0),
  };
  let stopped = false;
  const agents: http.Agent[] = [];
  const worker = async (index: number) => {
    // One socket per worker and server: its requests reuse it while the server keeps it alive.
    const agentsOfWorker = options.servers.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    agents.push(...agentsOfWorker);
    let server = 0;
    let n = index;
    while (!stopped) {
      const path = options.paths[n++ % options.paths.length]!;
      for (let attempt = 0; ; attempt++) {
        const from = server;
        let answer: Answer;
        try {
          answer = await get(options.servers[from]! + path, agentsOfWorker[from]!, options.key);
        } catch (error) {
          // A failed request; the worker moves on so that the load goes on.
          result.failures.push(`${options.servers[from]}${path}: ${(error as Error).message}`);
          server = Math.min(from + 1, options.servers.length - 1);
          break;
        }
        if (answer.close) result.closeHeaders += 1;
        if (answer.close || answer.status === 503) server = Math.min(from + 1, options.servers.length - 1);
        if (answer.status === 503 && attempt + 1 < options.servers.length) {
          result.retried += 1;
          continue;
        }
        if (answer.status === 200) {
          result.ok += 1;
          result.perServer[from] = (result.perServer[from] ?? 0) + 1;
          options.onAnswer?.(answer.body, from, index);
        } else
          result.failures.push(
            `${options.servers[from]}${path}: ${answer.status} ${answer.body.slice(0, 200)}`,
          );
        break;
      }
    }
  };
  const workers = Array.from({ length: options.connections }, (_, i) => worker(i));
  return {
    result,
    async stop() {
      stopped = true;
      await Promise.all(workers);
      for (const agent of agents) agent.destroy();
      return result;
    },
  };
}
