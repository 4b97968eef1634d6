/**
 * The console's Origin check (console/security.ts): exactly CONSOLE_URL's origin, and the other
 * loopback names of the same scheme and port only when CONSOLE_URL is itself a loopback one.
 */
import t from 'tap';
import { sameConsoleOrigin } from '../../console/security.js';

t.test('a public CONSOLE_URL accepts only itself', async (t) => {
  const own = 'https://console.example.org';
  t.equal(sameConsoleOrigin(own, own), true);
  for (const other of [
    'https://localhost',
    'https://127.0.0.1',
    'https://[::1]',
    'http://console.example.org',
    'https://console.example.org:8443',
    'https://evil.example',
    'null',
  ]) {
    t.equal(sameConsoleOrigin(other, own), false, other);
  }
  t.equal(sameConsoleOrigin(undefined, own), false, 'no Origin');
});

t.test('a loopback CONSOLE_URL accepts every loopback name, same scheme and port', async (t) => {
  const own = 'http://localhost:8081';
  for (const alias of ['http://localhost:8081', 'http://127.0.0.1:8081', 'http://[::1]:8081']) {
    t.equal(sameConsoleOrigin(alias, own), true, alias);
    t.equal(sameConsoleOrigin(own, alias), true, `${own} for a CONSOLE_URL of ${alias}`);
  }
  for (const other of [
    'http://127.0.0.1:8080',
    'https://127.0.0.1:8081',
    'http://127.0.0.2:8081',
    'http://localhost.evil.example:8081',
    'http://192.168.1.10:8081',
    'http://127.0.0.1:8081/path',
    'null',
  ]) {
    t.equal(sameConsoleOrigin(other, own), false, other);
  }
});
