/**
 * The account page (two-factor sign-in with an authenticator app: TOTP with otplib, enrolment by
 * QR code, ten recovery codes shown once) and the step-up that key creation asks for when the
 * sign-in is more than ten minutes old: an authenticator or recovery code when two-factor sign-in
 * is on, else an 8-digit code e-mailed to the user (10 minutes, 5 tries). An authenticator code
 * works once (its time step is recorded). A step-up gives the session a new token.
 */
import { randomInt } from 'node:crypto';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import type { ConsoleUser } from '../accounts/index.js';
import type { ConsoleDeps, Visitor } from './deps.js';
import { Csrf, Notice, renderPage } from './layout.js';
import { fresh } from './routes-keys.js';
import { safeNext } from './routes-sign-in.js';
import { SESSION_COOKIE, hostCookie, sha256 } from './security.js';

const STEP_CODE_MS = 10 * 60_000;
const STEP_CODE_TRIES = 5;
const RECOVERY_CODES = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

type Body = Record<string, string | undefined>;

const stepCodeHash = (sessionId: string, code: string) => sha256(`step-up\u0000${sessionId}\u0000${code}`);
const recoveryHash = (userId: string, code: string) =>
  sha256(`recovery\u0000${userId}\u0000${code.toLowerCase().replace(/[^a-z0-9]/g, '')}`);

function recoveryCode(): string {
  let out = '';
  for (let i = 0; i < 10; i++) out += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

/**
 * The TOTP time step of a valid code (±30 s), or null. Steps up to `afterStep` are refused: a code
 * works once (the store records the step, `useTotpStep`).
 */
export async function totpStep(
  secret: string,
  code: string,
  afterStep: number | null,
): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epochTolerance: 30,
    ...(afterStep !== null && { afterTimeStep: afterStep }),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** An authenticator code, or an unused recovery code (used up here). */
async function secondFactorValid(deps: ConsoleDeps, user: ConsoleUser, code: string): Promise<boolean> {
  const trimmed = code.replace(/\s/g, '');
  if (user.totpSecret !== null) {
    const step = await totpStep(user.totpSecret, trimmed, user.totpLastStep);
    if (step !== null) return deps.store.useTotpStep(user.id, step);
  }
  return (
    /^[a-z0-9-]{10,11}$/i.test(trimmed) &&
    deps.store.useRecoveryCode(user.id, recoveryHash(user.id, trimmed), new Date())
  );
}

export function registerAccountRoutes(deps: ConsoleDeps): void {
  const { app } = deps;
  const twoFactor = (visitor: Visitor) => visitor.user.totpEnabledAt !== null;

  function stepUpPage(
    request: Parameters<typeof deps.page>[0],
    visitor: Visitor,
    next: string,
    problem?: string,
  ) {
    const ctx = deps.page(request);
    const sent =
      visitor.session.stepCodeHash !== null &&
      visitor.session.stepCodeExpiresAt !== null &&
      visitor.session.stepCodeExpiresAt.getTime() > Date.now();
    const codeForm = (label: string, hint: string) => (
      <form class="stack" method="post" action="/step-up">
        <Csrf ctx={ctx} />
        <input type="hidden" name="next" value={next} />
        <label>
          {label}
          <input
            name="code"
            autocomplete="one-time-code"
            inputMode={twoFactor(visitor) ? 'text' : 'numeric'}
            required
            maxLength={20}
          />
          <span class="hint">{hint}</span>
        </label>
        <div>
          <button type="submit">Confirm</button>
        </div>
      </form>
    );
    return renderPage(ctx, 'Confirm it is you', [
      <p>Creating a key needs a sign-in from the last ten minutes.</p>,
      problem && <Notice kind="error">{problem}</Notice>,
      twoFactor(visitor)
        ? codeForm(
            'Authenticator code',
            'The 6-digit code of your authenticator app, or one of your recovery codes.',
          )
        : [
            sent && (
              <Notice kind="ok">We e-mailed a code to {visitor.user.email}. It works for 10 minutes.</Notice>
            ),
            sent && codeForm('Code from the e-mail', 'The 8 digits from the message.'),
            <form class="stack" method="post" action="/step-up/send">
              <Csrf ctx={ctx} />
              <input type="hidden" name="next" value={next} />
              <div>
                <button class={sent ? 'secondary' : ''} type="submit">
                  {sent ? 'Send a new code' : `E-mail a code to ${visitor.user.email}`}
                </button>
              </div>
            </form>,
          ],
    ]);
  }

  app.get('/step-up', (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const next = safeNext((request.query as Record<string, unknown>).next);
    if (fresh(visitor)) return reply.redirect(next, 303);
    return deps.send(reply, stepUpPage(request, visitor, next));
  });

  app.post('/step-up/send', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const next = safeNext((request.body as Body).next);
    if (twoFactor(visitor)) return reply.redirect(`/step-up?next=${encodeURIComponent(next)}`, 303);
    if (!(await deps.limiter.take(visitor.user.email, request.ip))) {
      return deps.send(
        reply,
        stepUpPage(request, visitor, next, 'Too many codes were asked for: wait a few minutes.'),
        429,
      );
    }
    const code = String(randomInt(0, 100_000_000)).padStart(8, '0');
    await deps.store.setStepCode(
      visitor.session.id,
      stepCodeHash(visitor.session.id, code),
      new Date(Date.now() + STEP_CODE_MS),
    );
    await deps.mailer.send({
      to: visitor.user.email,
      subject: `ipscope console code: ${code}`,
      text: `Your code to confirm it is you: ${code}\n\nIt works for 10 minutes. If you did not ask for it, someone may be using your session: sign out everywhere from the account page.\n`,
    });
    return reply.redirect(`/step-up?next=${encodeURIComponent(next)}`, 303);
  });

  app.post('/step-up', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const body = request.body as Body;
    const next = safeNext(body.next);
    const code = (body.code ?? '').trim();
    let ok: boolean;
    if (twoFactor(visitor)) ok = await secondFactorValid(deps, visitor.user, code);
    else {
      const s = visitor.session;
      ok =
        s.stepCodeHash !== null &&
        s.stepCodeExpiresAt !== null &&
        s.stepCodeExpiresAt.getTime() > Date.now() &&
        s.stepCodeTries < STEP_CODE_TRIES &&
        /^\d{8}$/.test(code) &&
        stepCodeHash(s.id, code) === s.stepCodeHash;
    }
    if (!ok) {
      const tries = await deps.store.countStepCodeTry(visitor.session.id);
      if (!twoFactor(visitor) && tries >= STEP_CODE_TRIES)
        await deps.store.setStepCode(visitor.session.id, null, null);
      const refreshed = (await deps.store.getSession(visitor.session.id)) ?? visitor.session;
      return deps.send(
        reply,
        stepUpPage(
          request,
          { ...visitor, session: refreshed },
          next,
          'That code is not right, or it has expired.',
        ),
        400,
      );
    }
    await deps.rotateSession(request, reply, visitor);
    return reply.redirect(next, 303);
  });

  app.get('/account', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const ctx = deps.page(request);
    const left = twoFactor(visitor) ? await deps.store.countRecoveryCodes(visitor.user.id) : 0;
    return deps.send(
      reply,
      renderPage(ctx, 'Account', [
        <section class="card">
          <h2>Sign-in</h2>
          <p>
            You sign in with links e-mailed to <strong>{visitor.user.email}</strong>.
          </p>
          <form method="post" action="/account/sign-out-everywhere">
            <Csrf ctx={ctx} />
            <button class="secondary" type="submit">
              Sign out on every device
            </button>
          </form>
        </section>,
        <section class="card">
          <h2>Two-factor sign-in</h2>
          {twoFactor(visitor)
            ? [
                <p>
                  On: creating a key asks for a code of your authenticator app. {left} unused recovery codes
                  left.
                </p>,
                <form class="stack" method="post" action="/account/totp/disable">
                  <Csrf ctx={ctx} />
                  <label>
                    Authenticator or recovery code
                    <input name="code" autocomplete="one-time-code" required maxLength={20} />
                  </label>
                  <div>
                    <button class="danger" type="submit">
                      Turn off two-factor sign-in
                    </button>
                  </div>
                </form>,
              ]
            : [
                <p>
                  Off: creating a key asks for a code e-mailed to you. Turn it on to use an authenticator app
                  instead.
                </p>,
                <form method="post" action="/account/totp/start">
                  <Csrf ctx={ctx} />
                  <button type="submit">Set up an authenticator app</button>
                </form>,
              ]}
        </section>,
      ]),
    );
  });

  app.post('/account/totp/start', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    if (twoFactor(visitor)) return reply.redirect('/account', 303);
    const secret = generateSecret();
    await deps.store.setTotp(visitor.user.id, secret, null);
    const uri = generateURI({ issuer: 'ipscope', label: visitor.user.email, secret });
    const qr = await QRCode.toDataURL(uri, { margin: 1, width: 220 });
    const ctx = deps.page(request);
    return deps.send(
      reply,
      renderPage(ctx, 'Set up an authenticator app', [
        <ol>
          <li>Scan the code with your authenticator app, or type the key below into it.</li>
          <li>Enter the 6-digit code the app shows.</li>
        </ol>,
        <img src={qr} width={220} height={220} alt="QR code of the authenticator key" />,
        <p>
          Key: <code id="totp-secret">{secret}</code>
        </p>,
        <form class="stack" method="post" action="/account/totp/confirm">
          <Csrf ctx={ctx} />
          <label>
            Code from the app
            <input name="code" autocomplete="one-time-code" inputMode="numeric" required maxLength={6} />
          </label>
          <div>
            <button type="submit">Turn on</button>
          </div>
        </form>,
      ]),
    );
  });

  app.post('/account/totp/confirm', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const secret = visitor.user.totpSecret;
    const code = ((request.body as Body).code ?? '').trim();
    const step = secret === null ? null : await totpStep(secret, code, null);
    if (twoFactor(visitor) || secret === null || step === null) {
      return deps.error(
        request,
        reply,
        400,
        'That code is not right: start the set-up again from the account page.',
      );
    }
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    await deps.store.replaceRecoveryCodes(
      visitor.user.id,
      codes.map((c) => recoveryHash(visitor.user.id, c)),
    );
    await deps.store.setTotp(visitor.user.id, secret, new Date());
    await deps.store.useTotpStep(visitor.user.id, step);
    await deps.rotateSession(request, reply, visitor);
    return deps.send(
      reply,
      renderPage(deps.page(request), 'Two-factor sign-in is on', [
        <Notice kind="ok">
          Keep these recovery codes somewhere safe: each works once, instead of an app code.
        </Notice>,
        <ul class="codes" id="recovery-codes">
          {codes.map((c) => (
            <li>{c}</li>
          ))}
        </ul>,
        <p>
          <a href="/account">Back to the account</a>
        </p>,
      ]),
    );
  });

  app.post('/account/totp/disable', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    if (!twoFactor(visitor)) return reply.redirect('/account', 303);
    if (!(await secondFactorValid(deps, visitor.user, (request.body as Body).code ?? ''))) {
      return deps.error(request, reply, 400, 'That code is not right.');
    }
    await deps.store.setTotp(visitor.user.id, null, null);
    await deps.store.replaceRecoveryCodes(visitor.user.id, []);
    return reply.redirect('/account', 303);
  });

  app.post('/account/sign-out-everywhere', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    await deps.store.deleteUserSessions(visitor.user.id);
    reply.header('set-cookie', hostCookie(SESSION_COOKIE, '', 0));
    return reply.redirect('/sign-in', 303);
  });
}
