/**
 * Sign-in by e-mailed link, no password (docs/api.md#authentication). Invite-only: only addresses
 * in the accounts store (invited with `npx server invite` or by a workspace owner or admin) get a
 * link, but every address gets the same page at the same speed: the look-up and the mail happen
 * after the answer is sent. A link carries 256 random bits, is stored as its sha256, works once and
 * for 15 minutes, and opening it only shows a confirm button (mail scanners that fetch links do not
 * use it up); a link that no longer works says so at once. With two-factor sign-in on, the link
 * opens a session that waits for an authenticator or recovery code and opens no other page; the
 * code makes it a full session with a new token. The page asked for (`?next=`) is kept throughout.
 */
import type { FastifyRequest } from 'fastify';
import type { ConsoleDeps } from './deps.js';
import { Field, ProblemSummary, blankForm, type FormState } from './forms.js';
import { Csrf, Notice, renderPage } from './layout.js';
import { SECOND_FACTOR_TRIES, secondFactorValid } from './second-factor.js';
import { SESSION_COOKIE, hostCookie, sha256 } from './security.js';
import { createSignInLink } from './sign-in-link.js';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,255}$/;

type Body = Record<string, string | undefined>;

/** A local path to go to after sign-in, or `/`. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?!\/)[\w\-./?=&%]*$/.test(next) && next.length < 300 ? next : '/';
}

/** Creates a sign-in link for an invited user and e-mails it; returns the link. */
export async function sendSignInLink(
  deps: ConsoleDeps,
  userId: string,
  email: string,
  next = '/',
): Promise<string> {
  const link = await createSignInLink(deps.store, deps.origin, userId, new Date(), next);
  await deps.mailer.send({
    to: email,
    subject: 'Your ipscope console sign-in link',
    text: `Open this link to sign in to the ipscope console:\n\n${link}\n\nIt works once, for 15 minutes. If you did not ask for it, ignore this message.\n`,
  });
  return link;
}

const query = (request: FastifyRequest) => request.query as Record<string, unknown>;

export function registerSignInRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  function signInPage(request: FastifyRequest, next: string, form: FormState) {
    const ctx = deps.page(request);
    return renderPage(ctx, 'Sign in', [
      <p>We e-mail you a link that signs you in. During the preview only invited addresses can sign in.</p>,
      next !== '/' && <Notice>Sign in to continue to the page you asked for.</Notice>,
      <form class="stack" method="post" action="/sign-in" novalidate>
        <ProblemSummary problems={form.problems} />
        <Csrf ctx={ctx} />
        <input type="hidden" name="next" value={next} />
        <Field
          label="E-mail address"
          name="email"
          form={form}
          type="email"
          autocomplete="email"
          required
          maxLength={320}
        />
        <div>
          <button type="submit">E-mail me a sign-in link</button>
        </div>
      </form>,
    ]);
  }

  app.get('/sign-in', (request, reply) => {
    const next = safeNext(query(request).next);
    if (request.visitor) return reply.redirect(next, 303);
    if (request.pending) return reply.redirect(`/sign-in/code?next=${encodeURIComponent(next)}`, 303);
    return deps.send(reply, signInPage(request, next, blankForm()));
  });

  app.post('/sign-in', (request, reply) => {
    const body = request.body as Body;
    const email = (body.email ?? '').trim().toLowerCase();
    const next = safeNext(body.next);
    if (!EMAIL.test(email)) {
      return deps.invalid(
        reply,
        signInPage(request, next, {
          values: { email: body.email },
          problems: { email: 'Enter an e-mail address like name@example.com.' },
        }),
      );
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
        await sendSignInLink(deps, user.id, user.email, next);
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

  const linkGone = (request: FastifyRequest) =>
    renderPage(deps.page(request), 'This link no longer works', [
      <Notice kind="error">
        Sign-in links work once and for 15 minutes. This one was used or has expired.
      </Notice>,
      <p>
        <a href="/sign-in">Ask for a new link</a>
      </p>,
    ]);

  const validToken = (token: unknown): token is string =>
    typeof token === 'string' && /^[\w-]{43}$/.test(token);

  app.get('/sign-in/link', async (request, reply) => {
    const { token } = query(request);
    const next = safeNext(query(request).next);
    if (!validToken(token) || !(await deps.store.signInLinkUsable(sha256(token), new Date()))) {
      return deps.send(reply, linkGone(request), 400);
    }
    const ctx = deps.page(request);
    return deps.send(
      reply,
      renderPage(ctx, 'Confirm sign-in', [
        <p>Press the button to finish signing in on this device.</p>,
        <form class="stack" method="post" action="/sign-in/link">
          <Csrf ctx={ctx} />
          <input type="hidden" name="token" value={token} />
          <input type="hidden" name="next" value={next} />
          <div>
            <button type="submit">Sign in</button>
          </div>
        </form>,
      ]),
    );
  });

  app.post('/sign-in/link', async (request, reply) => {
    const body = request.body as Body;
    const token = body.token ?? '';
    const next = safeNext(body.next);
    const userId = validToken(token) ? await deps.store.consumeSignInLink(sha256(token), new Date()) : null;
    const user = userId === null ? null : await deps.store.getUser(userId);
    if (user === null) return deps.send(reply, linkGone(request), 400);
    const twoFactor = user.totpEnabledAt !== null;
    await deps.startSession(request, reply, user.id, twoFactor);
    return reply.redirect(twoFactor ? `/sign-in/code?next=${encodeURIComponent(next)}` : next, 303);
  });

  function codePage(request: FastifyRequest, next: string, form: FormState) {
    const ctx = deps.page(request);
    return renderPage(ctx, 'Enter your authenticator code', [
      <p>Two-factor sign-in is on for this account: the e-mailed link is half of the sign-in.</p>,
      <form class="stack" method="post" action="/sign-in/code" novalidate>
        <ProblemSummary problems={form.problems} />
        <Csrf ctx={ctx} />
        <input type="hidden" name="next" value={next} />
        <Field
          label="Authenticator code"
          name="code"
          form={form}
          autocomplete="one-time-code"
          required
          maxLength={20}
          hint="The 6-digit code of your authenticator app, or one of your recovery codes."
        />
        <div>
          <button type="submit">Sign in</button>
        </div>
      </form>,
      <form method="post" action="/sign-out">
        <Csrf ctx={ctx} />
        <button class="link" type="submit">
          Cancel this sign-in
        </button>
      </form>,
    ]);
  }

  app.get('/sign-in/code', (request, reply) => {
    const next = safeNext(query(request).next);
    if (request.visitor) return reply.redirect(next, 303);
    if (!request.pending) return reply.redirect(`/sign-in?next=${encodeURIComponent(next)}`, 303);
    return deps.send(reply, codePage(request, next, blankForm()));
  });

  app.post('/sign-in/code', async (request, reply) => {
    const pending = request.pending;
    const body = request.body as Body;
    const next = safeNext(body.next);
    if (pending === null) return reply.redirect(`/sign-in?next=${encodeURIComponent(next)}`, 303);
    if (await secondFactorValid(deps, pending.user, body.code ?? '')) {
      if (await deps.completeSignIn(reply, pending)) return reply.redirect(next, 303);
    }
    const tries = await deps.store.countStepCodeTry(pending.session.id);
    if (tries >= SECOND_FACTOR_TRIES) {
      await deps.store.deleteSession(pending.session.id);
      reply.header('set-cookie', hostCookie(SESSION_COOKIE, '', 0));
      return deps.send(
        reply,
        renderPage({ ...deps.page(request), email: null }, 'Too many wrong codes', [
          <Notice kind="error">This sign-in has ended after {SECOND_FACTOR_TRIES} wrong codes.</Notice>,
          <p>
            <a href="/sign-in">Ask for a new link</a> to try again.
          </p>,
        ]),
        429,
      );
    }
    return deps.invalid(
      reply,
      codePage(request, next, {
        values: {},
        problems: {
          code: `That code is not right, or it was used already (${SECOND_FACTOR_TRIES - tries} tries left).`,
        },
      }),
    );
  });

  app.post('/sign-out', async (request, reply) => {
    const session = request.visitor ?? request.pending;
    if (session) await deps.store.deleteSession(session.session.id);
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
