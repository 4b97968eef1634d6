/**
 * Sign-in by e-mailed link, no password (docs/api.md#authentication). Invite-only: only addresses
 * in the accounts store (invited with `npx server invite` or by a workspace owner or admin) get a
 * link, but every address gets the same page at the same speed: the look-up and the mail happen
 * after the answer is sent. A link carries 256 random bits, is stored as its sha256, works once and
 * for 15 minutes, and opening it only shows a confirm button (mail scanners that fetch links do not
 * use it up).
 */
import { Csrf, Notice, renderPage } from './layout.js';
import type { ConsoleDeps } from './deps.js';
import { SESSION_COOKIE, hostCookie, sha256 } from './security.js';
import { createSignInLink } from './sign-in-link.js';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

/** A local path to go to after sign-in, or `/`. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?!\/)[\w\-./?=&%]*$/.test(next) && next.length < 300 ? next : '/';
}

/** Creates a sign-in link for an invited user and e-mails it; returns the link. */
export async function sendSignInLink(deps: ConsoleDeps, userId: string, email: string): Promise<string> {
  const link = await createSignInLink(deps.store, deps.origin, userId);
  await deps.mailer.send({
    to: email,
    subject: 'Your ipscope console sign-in link',
    text: `Open this link to sign in to the ipscope console:\n\n${link}\n\nIt works once, for 15 minutes. If you did not ask for it, ignore this message.\n`,
  });
  return link;
}

export function registerSignInRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  app.get('/sign-in', (request, reply) => {
    const next = safeNext((request.query as Record<string, unknown>).next);
    if (request.visitor) return reply.redirect(next, 303);
    return deps.send(
      reply,
      renderPage(deps.page(request), 'Sign in', [
        <p>We e-mail you a link that signs you in. During the preview only invited addresses can sign in.</p>,
        <form class="stack" method="post" action="/sign-in">
          <Csrf ctx={deps.page(request)} />
          <label>
            E-mail address
            <input type="email" name="email" autocomplete="email" required maxLength={320} />
          </label>
          <div>
            <button type="submit">E-mail me a sign-in link</button>
          </div>
        </form>,
      ]),
    );
  });

  app.post('/sign-in', (request, reply) => {
    const body = request.body as Record<string, string>;
    const email = (body.email ?? '').trim().toLowerCase();
    if (!EMAIL.test(email)) {
      return deps.error(request, reply, 400, 'Enter an e-mail address like name@example.com.');
    }
    // The same answer for every address, sent before anything depends on the address.
    const client = request.ip;
    setImmediate(() => {
      void (async () => {
        if (!(await deps.limiter.take(email, client))) {
          request.log.info('console: sign-in link not sent: too many requests for the address or client');
          return;
        }
        const user = await deps.store.findUserByEmail(email);
        if (user === null) return;
        await sendSignInLink(deps, user.id, user.email);
      })().catch((error: unknown) => request.log.error({ err: error }, 'console: sign-in link not sent'));
    });
    return deps.send(
      reply,
      renderPage(deps.page(request), 'Check your e-mail', [
        <Notice kind="ok">
          If <strong>{email}</strong> is invited, a sign-in link is on its way. It works once, for 15 minutes.
        </Notice>,
        <p>
          No message after a few minutes? Check the spam folder, or <a href="/sign-in">ask for a new link</a>.
          Links are limited to a few per quarter hour.
        </p>,
      ]),
    );
  });

  app.get('/sign-in/link', (request, reply) => {
    const token = (request.query as Record<string, unknown>).token;
    const ctx = deps.page(request);
    return deps.send(
      reply,
      renderPage(ctx, 'Confirm sign-in', [
        <p>Press the button to finish signing in on this device.</p>,
        <form class="stack" method="post" action="/sign-in/link">
          <Csrf ctx={ctx} />
          <input type="hidden" name="token" value={typeof token === 'string' ? token.slice(0, 100) : ''} />
          <div>
            <button type="submit">Sign in</button>
          </div>
        </form>,
      ]),
    );
  });

  app.post('/sign-in/link', async (request, reply) => {
    const token = (request.body as Record<string, string>).token ?? '';
    const userId = /^[\w-]{43}$/.test(token)
      ? await deps.store.consumeSignInLink(sha256(token), new Date())
      : null;
    if (userId === null) {
      return deps.send(
        reply,
        renderPage(deps.page(request), 'This link no longer works', [
          <Notice kind="error">
            Sign-in links work once and for 15 minutes. This one was used or has expired.
          </Notice>,
          <p>
            <a href="/sign-in">Ask for a new link</a>
          </p>,
        ]),
        400,
      );
    }
    await deps.startSession(request, reply, userId);
    return reply.redirect('/', 303);
  });

  app.post('/sign-out', async (request, reply) => {
    if (request.visitor) await deps.store.deleteSession(request.visitor.session.id);
    reply.header('set-cookie', hostCookie(SESSION_COOKIE, '', 0));
    return deps.send(
      reply,
      renderPage({ ...deps.page(request), email: null }, 'Signed out', [
        <p>You are signed out on this device.</p>,
        <p>
          <a href="/sign-in">Sign in again</a>
        </p>,
      ]),
    );
  });
}
