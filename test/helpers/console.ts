/**
 * The console tests' real parts: the server program (`serve`, API and console) on free ports with
 * the demo release and a fresh accounts file, a real SMTP server (smtp-server) that catches the
 * console's mail, a plain HTTP client with a cookie jar (for the forgery and IDOR tests), and
 * headless Chromium driven by playwright-core.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { SMTPServer } from 'smtp-server';
import { chromium, type BrowserContext } from 'playwright-core';
import { serve } from '../../server/serve.js';
import { loadSettings } from '../../shared/config.js';
import type { AccountsStore } from '../../accounts/index.js';
import { copyDemoRelease } from './demo-release.js';

export interface CaughtMail {
  to: string;
  subject: string;
  text: string;
}

export interface MailSink {
  url: string;
  mails: CaughtMail[];
  /** The next mail to `to` that arrives after `after` mails were caught (waits up to 20 s). */
  next(to: string, after: number): Promise<CaughtMail>;
  close(): Promise<void>;
}

export function decodeQuotedPrintable(text: string): string {
  return text
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

export async function startMailSink(t: Test): Promise<MailSink> {
  const mails: CaughtMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const [head = '', ...body] = raw.split(/\r?\n\r?\n/);
        const subject = /^Subject: (.*)$/m.exec(head)?.[1] ?? '';
        const qp = /Content-Transfer-Encoding: quoted-printable/i.test(head);
        const text = body.join('\n\n');
        mails.push({
          to: session.envelope.rcptTo.map((r) => r.address).join(','),
          subject,
          text: qp ? decodeQuotedPrintable(text) : text,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  t.teardown(close);
  return {
    url: `smtp://127.0.0.1:${port}`,
    mails,
    close,
    async next(to, after) {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const mail = mails.slice(after).find((m) => m.to === to);
        if (mail) return mail;
        if (Date.now() > deadline)
          throw new Error(`no mail to ${to} within 20 s (caught: ${JSON.stringify(mails)})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

export const linkIn = (mail: CaughtMail): string => {
  const link = /https?:\/\/\S+\/sign-in\/link\?token=[\w-]+(?:&next=[\w%.-]+)?/.exec(mail.text)?.[0];
  if (!link) throw new Error(`no sign-in link in ${JSON.stringify(mail.text)}`);
  return link;
};

export interface ConsoleServer {
  api: string;
  console: string;
  store: AccountsStore;
  sink: MailSink;
  dir: string;
}

export async function startConsoleServer(t: Test, env: Record<string, string> = {}): Promise<ConsoleServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'console-'));
  const releasesDir = path.join(dir, 'releases');
  copyDemoRelease(releasesDir);
  const sink = await startMailSink(t);
  const settings = loadSettings(
    {},
    {
      PORT: 0,
      CONSOLE_PORT: 0,
      // Chromium treats http://localhost as a secure context: the __Host-/Secure cookie works on it.
      CONSOLE_URL: 'http://localhost:0',
      ACCOUNTS_DB: path.join(dir, 'accounts.sqlite'),
      RELEASES_DIR: releasesDir,
      SMTP_URL: sink.url,
      USAGE_FLUSH_MS: 50,
      KEY_CACHE_MS: 0,
      LOG_LEVEL: 'silent',
      ...env,
    },
  );
  const server = await serve(settings, () => {});
  t.teardown(async () => {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { api: server.url, console: server.consoleUrl!, store: server.services.store, sink, dir };
}

/** Headless Chromium with a fresh profile. */
export async function startBrowser(t: Test): Promise<BrowserContext> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
  });
  t.teardown(async () => {
    await context.close();
    fs.rmSync(profile, { recursive: true, force: true });
  });
  return context;
}

/** A form-posting HTTP client with a cookie jar, for requests a browser would not make. */
export class FormClient {
  readonly cookies = new Map<string, string>();

  constructor(readonly base: string) {}

  private remember(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      if (/Max-Age=0/.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(
    urlPath: string,
  ): Promise<{ status: number; text: string; location: string | null; headers: Headers }> {
    const response = await fetch(this.base + urlPath, {
      headers: { cookie: this.cookieHeader() },
      redirect: 'manual',
    });
    this.remember(response);
    return {
      status: response.status,
      text: await response.text(),
      location: response.headers.get('location'),
      headers: response.headers,
    };
  }

  /** The CSRF token of the page at `urlPath` (its first form's). */
  async csrf(urlPath = '/account'): Promise<string> {
    const page = await this.get(urlPath);
    const token = /name="_csrf" value="([\w-]+)"/.exec(page.text)?.[1];
    if (!token) throw new Error(`no CSRF token on ${urlPath} (${page.status})`);
    return token;
  }

  async post(
    urlPath: string,
    form: Record<string, string>,
    options: { origin?: string | null } = {},
  ): Promise<{ status: number; text: string; location: string | null }> {
    const headers: Record<string, string> = {
      cookie: this.cookieHeader(),
      'content-type': 'application/x-www-form-urlencoded',
    };
    const origin = options.origin === undefined ? this.base : options.origin;
    if (origin !== null) headers.origin = origin;
    const response = await fetch(this.base + urlPath, {
      method: 'POST',
      headers,
      body: new URLSearchParams(form).toString(),
      redirect: 'manual',
    });
    this.remember(response);
    return {
      status: response.status,
      text: await response.text(),
      location: response.headers.get('location'),
    };
  }

  /** Signs in as an invited address through the e-mailed link. */
  async signIn(sink: MailSink, email: string): Promise<void> {
    const before = sink.mails.length;
    const csrf = await this.csrf('/sign-in');
    const sent = await this.post('/sign-in', { _csrf: csrf, email });
    if (sent.status !== 200) throw new Error(`sign-in request answered ${sent.status}`);
    const link = linkIn(await sink.next(email, before));
    const token = new URL(link).searchParams.get('token')!;
    const confirm = await this.post('/sign-in/link', {
      _csrf: await this.csrf(`/sign-in/link?token=${token}`),
      token,
    });
    if (confirm.status !== 303)
      throw new Error(`sign-in link answered ${confirm.status}: ${confirm.text.slice(0, 300)}`);
  }
}
