/**
 * What the console's route modules (routes-*.tsx, scope.ts, usage.tsx) share with the app that
 * registers them (app.tsx): its options, the signed-in visitor, the helpers of ConsoleDeps, the
 * session times and the two errors a route throws for a foreign or forbidden ID.
 */
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountsStore, ConsoleSession, ConsoleUser, Plan } from '../accounts/index.js';
import type { Envelope } from '../server/call/envelope.js';
import type { PageContext } from './layout.js';
import type { Mailer } from './mailer.js';
import type { SendLimiter } from './send-limiter.js';
import type { SharedStore } from '../server/limits/window-limiter.js';
import type { GuardOptions } from '../server/watch/ssrf.js';

/** A session ends after this long without a request… */
export const SESSION_IDLE_MS = 60 * 60_000;
/** …and this long after sign-in, whatever the activity. */
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60_000;
/** Key creation needs a sign-in or step-up at most this old (docs/api.md#limits: ten minutes). */
export const STEP_UP_FRESH_MS = 10 * 60_000;
/** A sign-in waiting for its authenticator code (two-factor sign-in) ends after this long. */
export const SECOND_FACTOR_WAIT_MS = 10 * 60_000;

export interface ConsoleOptions {
  store: AccountsStore;
  /** CONSOLE_URL's origin, e.g. https://console.example.org: links in mail and the Origin check. */
  origin: string;
  /** The API's address, for the playground's copy-as-curl (set once the API listens). */
  apiUrl?: string;
  mailer: Mailer;
  /** The API's call envelope: the playground's runs go through it like any request. */
  envelope: Envelope;
  /** The limits of a plan by name (the Free plan's from settings). */
  planLimits(name: string): Promise<Plan>;
  /** Watch entries per project of the Free plan (FREE_MAX_WATCH_ENTRIES) and where webhooks may go. */
  watch: { freeLimit: number; guard: GuardOptions };
  logger?: FastifyBaseLogger;
  /** Sign-in link and code e-mails per address and per client per 15 minutes. */
  sendLimits?: { perAddress: number; perClient: number };
  /** Where the e-mail limits are counted, shared by every process (default: this process). */
  sendStore?: SharedStore;
  trustProxy?: false | string[];
}

/** The signed-in state of a request. */
export interface Visitor {
  session: ConsoleSession;
  user: ConsoleUser;
  /** The cookie's token (the session id is its sha256). */
  token: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    visitor: Visitor | null;
    /** A sign-in that waits for its second factor: it opens only the code's page. */
    pending: Visitor | null;
    csrf: string | null;
  }
}

/** What the route modules share. */
export interface ConsoleDeps extends ConsoleOptions {
  app: FastifyInstance;
  limiter: SendLimiter;
  page(request: FastifyRequest): PageContext;
  /** Sends a page (no-store: pages carry account data). */
  send(reply: FastifyReply, html: string, status?: number): FastifyReply;
  /** Sends a form's page again with its problems (400). */
  invalid(reply: FastifyReply, html: string): FastifyReply;
  /** The signed-in visitor, or a redirect to sign in (GET) / 403 (POST) already sent. */
  visitor(request: FastifyRequest, reply: FastifyReply): Visitor | null;
  /**
   * Starts a session for the user: a new token, the old session (if any) ended. A pending one waits
   * for the second factor (two-factor sign-in) and opens no other page.
   */
  startSession(
    request: FastifyRequest,
    reply: FastifyReply,
    userId: string,
    pending?: boolean,
  ): Promise<void>;
  /** Gives the session a new token (after step-up), with a fresh authentication time; returns the token. */
  rotateSession(request: FastifyRequest, reply: FastifyReply, visitor: Visitor): Promise<string>;
  /** Makes a pending sign-in a full session with a new token; false when it was not pending. */
  completeSignIn(reply: FastifyReply, pending: Visitor): Promise<boolean>;
  error(request: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply;
}

export class NotFound extends Error {}
export class Forbidden extends Error {}
