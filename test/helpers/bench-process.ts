/** The bench's small servers (test/bench/*-server.ts, compiled) as tests start them. */
import { spawn } from 'node:child_process';
import type { Test } from 'tap';

/** Starts `node script ...args`, stopped at the test's end; resolves with the port it prints (`listening on <port>`). */
export function startListening(t: Test, script: string, args: string[]): Promise<number> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => child.kill());
  return new Promise<number>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /listening on (\d+)/.exec(text);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
}
