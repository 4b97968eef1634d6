/**
 * A real DNS server for tests and benchmarks: Knot (Debian's knotd) started on a free loopback
 * port with generated zones, everything (config, zones, database, control socket) in a temp dir,
 * no privileged port, no user switch. stop() ends the process and removes the dir.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import dnsPacket from 'dns-packet';

export const KNOTD = process.env.KNOTD ?? '/usr/sbin/knotd';
export const KNOTC = process.env.KNOTC ?? '/usr/sbin/knotc';

export interface KnotServer {
  host: string;
  port: number;
  dir: string;
  /** Writes a zone file (the zone must be one of those started with). */
  writeZone(origin: string, text: string): void;
  /** Reloads a zone and waits until it serves the given SOA serial. */
  reload(origin: string, serial: number): Promise<void>;
  stop(): Promise<void>;
}

export interface KnotOptions {
  udpWorkers?: number;
  /** How long to wait for the zones to load (default 20 s). */
  readyTimeoutMs?: number;
  /** Zone files already written under <dir>/zones (origin → file), for big generated sets. */
  zoneDir?: string;
}

/** A zone file: SOA and NS at the apex, then the given lines (relative or absolute owners). */
export function zoneText(origin: string, serial: number, lines: string[]): string {
  return [
    `$ORIGIN ${origin}.`,
    '$TTL 300',
    `@ SOA ns.${origin}. hostmaster.${origin}. ${serial} 3600 600 86400 300`,
    `@ NS ns.${origin}.`,
    ...lines,
    '',
  ].join('\n');
}

/** A loopback port free for both UDP and TCP at the time of the call. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    const udp = dgram.createSocket('udp4');
    const ok = await new Promise<boolean>((resolve) => {
      udp.once('error', () => resolve(false));
      udp.bind(port, '127.0.0.1', () => resolve(true));
    });
    udp.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    if (ok) return port;
  }
  throw new Error('no free loopback port for UDP and TCP');
}

/** The SOA serial the server gives for origin, or null when it does not answer (yet). */
export function soaSerial(
  host: string,
  port: number,
  origin: string,
  timeoutMs = 300,
): Promise<number | null> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    const done = (value: number | null): void => {
      clearTimeout(timer);
      socket.close();
      resolve(value);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    socket.on('error', () => done(null));
    socket.on('message', (msg) => {
      try {
        const answer = dnsPacket.decode(msg).answers?.find((a) => a.type === 'SOA');
        done(answer && answer.type === 'SOA' ? (answer.data.serial ?? null) : null);
      } catch {
        done(null);
      }
    });
    socket.send(
      dnsPacket.encode({ type: 'query', id: 7, questions: [{ type: 'SOA', name: origin }] }),
      port,
      host,
    );
  });
}

export async function startKnot(
  zones: Record<string, string>,
  options: KnotOptions = {},
): Promise<KnotServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'knot-'));
  const zoneDir = options.zoneDir ?? path.join(dir, 'zones');
  fs.mkdirSync(zoneDir, { recursive: true });
  for (const [origin, text] of Object.entries(zones))
    fs.writeFileSync(path.join(zoneDir, `${origin}.zone`), text);
  const origins = options.zoneDir
    ? fs
        .readdirSync(zoneDir)
        .filter((f) => f.endsWith('.zone'))
        .map((f) => f.slice(0, -'.zone'.length))
    : Object.keys(zones);
  const host = '127.0.0.1';
  let child: ChildProcess | null = null;
  let port = 0;
  const conf = path.join(dir, 'knot.conf');
  let stderr = '';
  for (let attempt = 0; attempt < 5 && child === null; attempt++) {
    port = await freePort();
    fs.writeFileSync(
      conf,
      [
        'server:',
        `    listen: ${host}@${port}`,
        `    rundir: ${dir}`,
        `    udp-workers: ${options.udpWorkers ?? 1}`,
        '    tcp-workers: 1',
        '    background-workers: 1',
        'control:',
        `    listen: ${path.join(dir, 'knot.sock')}`,
        'database:',
        `    storage: ${path.join(dir, 'db')}`,
        'log:',
        '  - target: stderr',
        '    any: error',
        'template:',
        '  - id: default',
        `    storage: ${zoneDir}`,
        '    file: "%s.zone"',
        '    journal-content: none',
        '    zonefile-sync: -1',
        '    zonefile-load: whole',
        '    semantic-checks: off',
        'zone:',
        ...origins.map((o) => `  - domain: ${o}`),
        '',
      ].join('\n'),
    );
    const started = spawn(KNOTD, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    started.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<'exited'>((resolve) => started.once('exit', () => resolve('exited')));
    const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
    let ready = false;
    while (Date.now() < deadline) {
      const serial = await Promise.race([soaSerial(host, port, origins[0]!), exited]);
      if (serial === 'exited') break;
      if (serial !== null) {
        ready = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (ready) child = started;
    else started.kill('SIGKILL');
  }
  if (child === null) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`knotd did not start: ${stderr}`);
  }
  const proc = child;
  return {
    host,
    port,
    dir,
    writeZone(origin, text) {
      fs.writeFileSync(path.join(zoneDir, `${origin}.zone`), text);
    },
    async reload(origin, serial) {
      const r = spawnSync(KNOTC, ['-c', conf, '-b', 'zone-reload', origin], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`knotc zone-reload ${origin}: ${r.stdout}${r.stderr}`);
      const deadline = Date.now() + 10_000;
      while ((await soaSerial(host, port, origin)) !== serial) {
        if (Date.now() > deadline) throw new Error(`${origin} did not reach serial ${serial}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        const exited = new Promise((resolve) => proc.once('exit', resolve));
        proc.kill('SIGTERM');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
