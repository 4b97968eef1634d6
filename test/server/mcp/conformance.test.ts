/**
 * The official MCP conformance runner (@modelcontextprotocol/conformance, server mode, every
 * active scenario) against the real server, with conformance-baseline.yml listing the scenarios
 * that need features this service does not offer. The runner exits 1 on an unexpected failure and
 * on a baseline entry that passes. Its client is the v1 SDK, so this exercises the 2025 era.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { ROOT } from '../../helpers/demo-release.js';
import { startTestServer } from '../../helpers/test-server.js';

const RUNNER = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const BASELINE = path.join(ROOT, 'test/server/mcp/conformance-baseline.yml');

t.test('conformance runner, server mode, against POST /mcp', { timeout: 280_000 }, async (t) => {
  const server = await startTestServer(t);
  const cwd = t.testdir({});
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [RUNNER, 'server', '--url', `${server.url}/mcp`, '--expected-failures', BASELINE],
      { cwd, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    let text = '';
    child.stdout.on('data', (d: Buffer) => (text += d.toString()));
    child.stderr.on('data', (d: Buffer) => (text += d.toString()));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ code: exitCode, output: text }));
  });
  const summary = output.slice(output.indexOf('=== SUMMARY ==='));
  t.comment(summary);
  t.match(output, /=== SUMMARY ===/, 'the runner ran every scenario');
  t.notMatch(output, /globSync/, 'the fs.globSync shim is in place');
  t.equal(code, 0, 'no unexpected failure and no stale baseline entry');
  for (const scenario of ['server-initialize', 'ping', 'tools-list']) {
    t.match(summary, new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`), `${scenario} passes`);
  }
});
