/**
 * What the console's Chromium story tests share: the real server and a fresh Chromium profile, a
 * page that records Content-Security-Policy violations, and `check(name)`, which runs axe-core on
 * the page at desktop (1280) and phone (390) widths in light and dark colour schemes (no serious or
 * critical violation) and saves screenshots of it (var/screenshots/, or docs/screenshots/ with
 * UPDATE_SCREENSHOTS=1, so that `make test` leaves the checkout as it found it).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Test } from 'tap';
import type { BrowserContext, Page } from 'playwright-core';
import { ROOT } from './demo-release.js';
import { linkIn, startBrowser, startConsoleServer, type ConsoleServer } from './console.js';
import { sha256 } from '../../console/security.js';

export const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(ROOT, 'docs', 'screenshots')
  : path.join(ROOT, 'var', 'screenshots');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 780 };

export interface Story {
  server: ConsoleServer;
  context: BrowserContext;
  page: Page;
  /** CSP violations reported on any page so far. */
  cspViolations: string[];
  /** Names of the pages checked so far. */
  checked: string[];
  /** axe-core at both widths in both schemes; screenshots (light) at both widths, `dark` also in dark. */
  check(name: string, options?: { dark?: boolean }): Promise<void>;
  /** Signs in by an e-mailed link (the sign-in page, the mail, the confirm button); returns the link. */
  signIn(email: string, next?: string): Promise<string>;
  /** Makes the session's sign-in older than ten minutes (as if time had passed). */
  ageSession(): Promise<void>;
  api(key: string, urlPath: string): Promise<{ status: number; body: Record<string, unknown> }>;
}

export async function startStory(t: Test, env: Record<string, string> = {}): Promise<Story> {
  const server = await startConsoleServer(t, env);
  const context = await startBrowser(t);
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  fs.mkdirSync(SHOTS, { recursive: true });
  const checked: string[] = [];

  async function axe(where: string) {
    await page.evaluate(AXE);
    const violations = (await page.evaluate(
      'axe.run(document, { resultTypes: ["violations"] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(" ")) })))',
    )) as { id: string; impact: string; nodes: string[] }[];
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    t.same(bad, [], `${where}: no serious or critical axe violation`);
  }

  const story: Story = {
    server,
    context,
    page,
    cspViolations,
    checked,
    async check(name, options = {}) {
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const [width, size] of [
          ['desktop', DESKTOP],
          ['phone', PHONE],
        ] as const) {
          await page.setViewportSize(size);
          await axe(`${name} (${width}, ${scheme})`);
          const overflow = await page.evaluate(
            () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
          );
          t.equal(overflow, 0, `${name} (${width}, ${scheme}): no sideways scrolling`);
          if (scheme === 'light' || options.dark) {
            const suffix = scheme === 'dark' ? '-dark' : '';
            await page.screenshot({
              path: path.join(SHOTS, `${name}-${width}${suffix}.png`),
              fullPage: true,
            });
          }
        }
      }
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize(DESKTOP);
      checked.push(name);
    },
    async signIn(email, next) {
      await page.goto(`${server.console}/sign-in${next ? `?next=${encodeURIComponent(next)}` : ''}`);
      const before = server.sink.mails.length;
      await page.getByLabel('E-mail address').fill(email);
      await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
      await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
      const link = linkIn(await server.sink.next(email, before));
      await page.goto(link.replace(/&amp;/g, '&'));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => !url.pathname.startsWith('/sign-in/link'));
      return link;
    },
    async ageSession() {
      const cookie = (await context.cookies(server.console)).find((c) => c.name === '__Host-ipscope-session');
      t.ok(cookie, 'the session cookie is set');
      const id = sha256(cookie!.value);
      t.ok(await server.store.rotateSession(id, id, new Date(Date.now() - 11 * 60_000)));
    },
    async api(key, urlPath) {
      const response = await fetch(server.api + urlPath, { headers: { authorization: `Bearer ${key}` } });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
  };
  return story;
}

/** The problem shown beside a field, its field marked invalid. */
export async function problemOf(t: Test, page: Page, name: string): Promise<string> {
  const field = page.locator(`#f-${name}`);
  t.equal(await field.getAttribute('aria-invalid'), 'true', `${name}: marked invalid`);
  t.match(await field.getAttribute('aria-describedby'), `e-${name}`, `${name}: described by its problem`);
  return (await page.textContent(`#e-${name}`))!.trim();
}
