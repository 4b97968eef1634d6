/**
 * The web console (docs/api.md#authentication, docs/decisions/0017-console.md), a Fastify app of
 * its own served on CONSOLE_URL's origin (server/cli.ts listens on CONSOLE_PORT). Every request
 * gets the security headers; every page and action resolves the session first; every POST must come
 * from the console's own origin with the CSRF token of its session; every route that names a
 * workspace, project, member, key, watch entry or webhook endpoint resolves it through the
 * member's own workspaces (scope.ts), so a foreign ID is a 404.
 */
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { loadAssets } from './assets.js';
import {
  Forbidden,
  NotFound,
  SECOND_FACTOR_WAIT_MS,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  type ConsoleDeps,
  type ConsoleOptions,
} from './deps.js';
import { Notice, renderPage, type PageContext } from './layout.js';
import {
  CSRF_COOKIE,
  SECURITY_HEADERS,
  SESSION_COOKIE,
  addCookie,
  csrfOfSession,
  hostCookie,
  randomToken,
  readCookies,
  refuseForgery,
  sha256,
} from './security.js';
import { registerAccountRoutes } from './routes-account.js';
import { registerKeyRoutes } from './routes-keys.js';
import { registerProjectRoutes } from './routes-project.js';
import { registerPlaygroundRoutes } from './routes-playground.js';
import { registerSignInRoutes } from './routes-sign-in.js';
import { registerWatchRoutes } from './routes-watch.js';
import { registerWebhookRoutes } from './routes-webhooks.js';
import { registerWorkspaceRoutes } from './routes-workspaces.js';
import { SendLimiter } from './send-limiter.js';

/** `last seen` is written at most this often per session. */
const TOUCH_EVERY_MS = 60_000;

const FORM_LIMIT_BYTES = 64 * 1024;

export function buildConsole(options: ConsoleOptions): FastifyInstance {
  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    bodyLimit: FORM_LIMIT_BYTES,
    trustProxy: options.trustProxy ?? false,
    exposeHeadRoutes: false,
  });
  const assets = loadAssets();
  app.decorateRequest('visitor', null);
  app.decorateRequest('pending', null);
  app.decorateRequest('csrf', null);
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(SECURITY_HEADERS);
    done();
  });

  // The session, the CSRF token and, for a POST, the forgery checks, before any handler.
  app.addHook('preHandler', async (request, reply) => {
    if (request.url.startsWith('/static/')) return;
    const cookies = readCookies(request.headers.cookie);
    const token = cookies.get(SESSION_COOKIE);
    const now = new Date();
    if (token !== undefined && /^[\w-]{43}$/.test(token)) {
      const session = await options.store.getSession(sha256(token));
      const pending = session?.secondFactorPendingSince ?? null;
      const alive =
        session !== null &&
        session.expiresAt.getTime() > now.getTime() &&
        now.getTime() - session.lastSeenAt.getTime() < SESSION_IDLE_MS &&
        (pending === null || now.getTime() - pending.getTime() < SECOND_FACTOR_WAIT_MS);
      const user = alive ? await options.store.getUser(session.userId) : null;
      if (session !== null && user !== null && pending !== null) {
        // Signed in by link, not yet by the second factor: only the code's page opens.
        request.pending = { session, user, token };
        request.csrf = csrfOfSession(token);
      } else if (session !== null && user !== null) {
        request.visitor = { session, user, token };
        request.csrf = csrfOfSession(token);
        if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_EVERY_MS) {
          await options.store.touchSession(session.id, now);
        }
      } else {
        if (session !== null) await options.store.deleteSession(session.id);
        addCookie(reply, hostCookie(SESSION_COOKIE, '', 0));
      }
    }
    if (request.visitor === null && request.pending === null) {
      let anonymous = cookies.get(CSRF_COOKIE);
      if (anonymous === undefined || !/^[\w-]{43}$/.test(anonymous)) {
        if (request.method === 'POST') anonymous = undefined;
        else addCookie(reply, hostCookie(CSRF_COOKIE, (anonymous = randomToken()), 60 * 60 * 24));
      }
      request.csrf = anonymous ?? null;
    }
    if (request.method === 'POST') {
      const why = refuseForgery(request, deps.origin, request.csrf);
      if (why !== null) {
        request.log.info({ origin: request.headers.origin ?? null }, `console: form refused: ${why}`);
        return deps.error(request, reply, 403, why);
      }
    }
  });

  const page = (request: FastifyRequest): PageContext => ({
    css: assets.css,
    js: assets.js,
    csrf: request.csrf ?? '',
    email: request.visitor?.user.email ?? null,
  });

  const sessionCookie = (token: string) => hostCookie(SESSION_COOKIE, token, SESSION_ABSOLUTE_MS / 1000);

  const deps: ConsoleDeps = {
    ...options,
    // Read at each use: serve() settles a CONSOLE_URL of port 0 once the console listens.
    get origin() {
      return options.origin;
    },
    get apiUrl() {
      return options.apiUrl;
    },
    app,
    limiter: new SendLimiter(
      options.sendLimits ?? { perAddress: 5, perClient: 20 },
      15 * 60_000,
      options.sendStore,
    ),
    page,
    send(reply, html, status = 200) {
      return (
        reply
          .code(status)
          .header('cache-control', 'no-store')
          // How long the page took to make (session, queries, render), for browsers' tools and the render-time test.
          .header('server-timing', `page;dur=${reply.elapsedTime.toFixed(1)}`)
          .type('text/html; charset=utf-8')
          .send(html)
      );
    },
    invalid(reply, html) {
      return deps.send(reply, html, 400);
    },
    visitor(request, reply) {
      if (request.visitor !== null) return request.visitor;
      if (request.method === 'GET') {
        const next = encodeURIComponent(request.url);
        const to = request.pending !== null ? '/sign-in/code' : '/sign-in';
        void reply.redirect(`${to}?next=${next}`, 303);
      } else void deps.error(request, reply, 403, 'Your session has ended: sign in again.');
      return null;
    },
    async startSession(request, reply, userId, pending = false) {
      const previous = request.visitor ?? request.pending;
      if (previous !== null) await options.store.deleteSession(previous.session.id);
      const token = randomToken();
      const now = new Date();
      await options.store.createSession({
        id: sha256(token),
        userId,
        createdAt: now,
        authenticatedAt: now,
        lastSeenAt: now,
        expiresAt: new Date(now.getTime() + (pending ? SECOND_FACTOR_WAIT_MS : SESSION_ABSOLUTE_MS)),
        secondFactorPendingSince: pending ? now : null,
      });
      addCookie(reply, sessionCookie(token));
      addCookie(reply, hostCookie(CSRF_COOKIE, '', 0));
    },
    async rotateSession(_request, reply, visitor) {
      const token = randomToken();
      await options.store.rotateSession(visitor.session.id, sha256(token), new Date());
      addCookie(reply, sessionCookie(token));
      return token;
    },
    async completeSignIn(reply, pending) {
      const token = randomToken();
      const now = new Date();
      const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS);
      if (!(await options.store.completeSecondFactor(pending.session.id, sha256(token), now, expiresAt))) {
        return false;
      }
      addCookie(reply, sessionCookie(token));
      return true;
    },
    error(request, reply, status, message) {
      const titles: Record<number, string> = { 400: 'Check the form', 403: 'Not allowed', 404: 'Not found' };
      return deps.send(
        reply,
        renderPage(page(request), titles[status] ?? 'Something went wrong', [
          <Notice kind="error">{message}</Notice>,
          <p>
            <a href="/">Back to your workspaces</a>
          </p>,
        ]),
        status,
      );
    },
  };

  app.get('/static/*', (request, reply) => {
    const asset = assets.byPath.get(request.url.split('?')[0]!);
    if (!asset) return reply.code(404).type('text/plain').send('not found');
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .type(asset.type)
      .send(asset.body);
  });

  app.get('/favicon.ico', (_request, reply) =>
    reply.code(204).header('cache-control', 'public, max-age=86400').send(),
  );

  registerSignInRoutes(deps);
  registerWorkspaceRoutes(deps);
  registerProjectRoutes(deps);
  registerKeyRoutes(deps);
  registerAccountRoutes(deps);
  registerPlaygroundRoutes(deps);
  registerWatchRoutes(deps);
  registerWebhookRoutes(deps);

  app.setNotFoundHandler((request, reply) =>
    deps.error(request, reply, 404, 'There is no such page, or it is not in one of your workspaces.'),
  );
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof NotFound) {
      return deps.error(
        request,
        reply,
        404,
        'There is no such page, or it is not in one of your workspaces.',
      );
    }
    if (error instanceof Forbidden) return deps.error(request, reply, 403, error.message);
    const status = (error as { statusCode?: number }).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return deps.error(request, reply, status, 'The request could not be read: send the form again.');
    }
    request.log.error({ err: error }, 'console: request failed');
    return deps.error(request, reply, 500, 'Something went wrong on our side: try again in a moment.');
  });
  return app;
}
