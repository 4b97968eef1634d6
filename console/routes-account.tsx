/**
 * The account page: two-factor sign-in with an authenticator app (TOTP with otplib, enrolment by
 * QR code, ten recovery codes shown once with copy and download) and signing out everywhere (after
 * a confirmation). The set-up keeps its secret until it is confirmed or a new one is asked for, so
 * a wrong code only asks for the code again. Forms that create something redirect (post/redirect/
 * get): the recovery codes reach their page sealed in the flash cookie (flash.ts) and show once.
 */
import { generateSecret, generateURI } from 'otplib';
import QRCode from 'qrcode';
import type { FastifyRequest } from 'fastify';
import type { ConsoleDeps, Visitor } from './deps.js';
import { clearFlash, readFlash, seal, setFlash } from './flash.js';
import { Field, ProblemSummary, blankForm, type FormState } from './forms.js';
import { Csrf, Notice, renderPage } from './layout.js';
import { registerStepUpRoutes, twoFactor } from './routes-step-up.js';
import { RECOVERY_CODES, recoveryCode, recoveryHash, secondFactorValid, totpStep } from './second-factor.js';
import { SESSION_COOKIE, hostCookie } from './security.js';

type Body = Record<string, string | undefined>;

const CODES_PURPOSE = 'recovery-codes';
const NOTICES: Record<string, string> = {
  'totp-off': 'Two-factor sign-in is off: sign-in needs only the e-mailed link again.',
};

export function registerAccountRoutes(deps: ConsoleDeps): void {
  const { app } = deps;
  registerStepUpRoutes(deps);

  async function accountPage(request: FastifyRequest, visitor: Visitor, disable: FormState) {
    const ctx = deps.page(request);
    const left = twoFactor(visitor) ? await deps.store.countRecoveryCodes(visitor.user.id) : 0;
    const done = NOTICES[String((request.query as Record<string, unknown>).done)];
    return renderPage(ctx, 'Account', [
      done && <Notice kind="ok">{done}</Notice>,
      <section class="card">
        <h2>Sign-in</h2>
        <p>
          You sign in with links e-mailed to <strong>{visitor.user.email}</strong>
          {twoFactor(visitor) && ' and a code of your authenticator app'}.
        </p>
        <p>
          <a class="button secondary" href="/account/sign-out-everywhere">
            Sign out on every device…
          </a>
        </p>
      </section>,
      <section class="card">
        <h2>Two-factor sign-in</h2>
        {twoFactor(visitor)
          ? [
              <p>
                On: signing in asks for a code of your authenticator app after the e-mailed link, and so does
                creating a key when the sign-in is older than ten minutes.{' '}
                <strong>
                  {left} of {RECOVERY_CODES}
                </strong>{' '}
                recovery codes left.
              </p>,
              left <= 2 && (
                <Notice kind="warn">
                  Few recovery codes are left: turn two-factor sign-in off and on again for ten new ones.
                </Notice>
              ),
              <form class="stack" method="post" action="/account/totp/disable" novalidate>
                <ProblemSummary problems={disable.problems} />
                <Csrf ctx={ctx} />
                <Field
                  label="Authenticator or recovery code"
                  name="code"
                  form={disable}
                  autocomplete="one-time-code"
                  required
                  maxLength={20}
                />
                <div>
                  <button class="danger" type="submit">
                    Turn off two-factor sign-in
                  </button>
                </div>
              </form>,
            ]
          : [
              <p>
                Off: you sign in with the e-mailed link alone, and creating a key asks for a code e-mailed to
                you. Turn it on to ask for a code of an authenticator app at every sign-in.
              </p>,
              <form method="post" action="/account/totp/start">
                <Csrf ctx={ctx} />
                <button type="submit">Set up an authenticator app</button>
              </form>,
            ]}
      </section>,
    ]);
  }

  app.get('/account', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    return deps.send(reply, await accountPage(request, visitor, blankForm()));
  });

  app.post('/account/totp/start', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    if (twoFactor(visitor)) return reply.redirect('/account', 303);
    // A set-up under way keeps its secret: the app may have it already.
    if (visitor.user.totpSecret === null) await deps.store.setTotp(visitor.user.id, generateSecret(), null);
    return reply.redirect('/account/totp', 303);
  });

  async function setupPage(request: FastifyRequest, secret: string, email: string, form: FormState) {
    const uri = generateURI({ issuer: 'ipscope', label: email, secret });
    const qr = await QRCode.toDataURL(uri, { margin: 1, width: 220 });
    const ctx = deps.page(request);
    return renderPage(ctx, 'Set up an authenticator app', [
      <ol>
        <li>Scan the code with your authenticator app, or type the key below into it.</li>
        <li>Enter the 6-digit code the app shows.</li>
      </ol>,
      <img class="qr" src={qr} width={220} height={220} alt="QR code of the authenticator key" />,
      <p>
        Key: <code id="totp-secret">{secret}</code>
      </p>,
      <form class="stack" method="post" action="/account/totp/confirm" novalidate>
        <ProblemSummary problems={form.problems} />
        <Csrf ctx={ctx} />
        <Field
          label="Code from the app"
          name="code"
          form={form}
          autocomplete="one-time-code"
          inputMode="numeric"
          required
          maxLength={6}
        />
        <div class="actions">
          <button type="submit">Turn on</button>
          <a href="/account">Not now</a>
        </div>
      </form>,
    ]);
  }

  app.get('/account/totp', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const secret = visitor.user.totpSecret;
    if (twoFactor(visitor) || secret === null) return reply.redirect('/account', 303);
    return deps.send(reply, await setupPage(request, secret, visitor.user.email, blankForm()));
  });

  app.post('/account/totp/confirm', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const secret = visitor.user.totpSecret;
    if (twoFactor(visitor) || secret === null) return reply.redirect('/account', 303);
    const code = ((request.body as Body).code ?? '').trim();
    const step = await totpStep(secret, code, null);
    if (step === null) {
      const form = {
        values: {},
        problems: {
          code: 'That code is not right: enter the code the app shows now (it changes every 30 s).',
        },
      };
      return deps.invalid(reply, await setupPage(request, secret, visitor.user.email, form));
    }
    const codes = Array.from({ length: RECOVERY_CODES }, recoveryCode);
    await deps.store.replaceRecoveryCodes(
      visitor.user.id,
      codes.map((c) => recoveryHash(visitor.user.id, c)),
    );
    await deps.store.setTotp(visitor.user.id, secret, new Date());
    await deps.store.useTotpStep(visitor.user.id, step);
    const token = await deps.rotateSession(request, reply, visitor);
    setFlash(reply, seal(token, CODES_PURPOSE, codes));
    return reply.redirect('/account/totp/recovery-codes', 303);
  });

  app.get('/account/totp/recovery-codes', (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const codes = readFlash<string[]>(request, visitor.token, CODES_PURPOSE);
    if (codes === null) {
      return deps.send(
        reply,
        renderPage(deps.page(request), 'Recovery codes are shown once', [
          <p>
            The recovery codes were shown when two-factor sign-in was turned on, and cannot be shown again.
            For new ones, turn two-factor sign-in off and on again.
          </p>,
          <p>
            <a href="/account">Back to the account</a>
          </p>,
        ]),
      );
    }
    clearFlash(reply);
    const text = `ipscope console recovery codes for ${visitor.user.email}\n(each works once, instead of an authenticator code)\n\n${codes.join('\n')}\n`;
    return deps.send(
      reply,
      renderPage(deps.page(request), 'Two-factor sign-in is on', [
        <Notice kind="ok">
          Keep these recovery codes somewhere safe: each works once, instead of an app code. They are shown
          only now.
        </Notice>,
        <ul class="codes" id="recovery-codes">
          {codes.map((c) => (
            <li>{c}</li>
          ))}
        </ul>,
        <div class="actions">
          <button type="button" data-copy="recovery-codes">
            Copy the codes
          </button>
          <a
            class="button secondary"
            download="ipscope-recovery-codes.txt"
            href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}
          >
            Download as a text file
          </a>
        </div>,
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
      const form = { values: {}, problems: { code: 'That code is not right, or it was used already.' } };
      return deps.invalid(reply, await accountPage(request, visitor, form));
    }
    await deps.store.setTotp(visitor.user.id, null, null);
    await deps.store.replaceRecoveryCodes(visitor.user.id, []);
    return reply.redirect('/account?done=totp-off', 303);
  });

  app.get('/account/sign-out-everywhere', (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const ctx = deps.page(request);
    return deps.send(
      reply,
      renderPage(ctx, 'Sign out on every device?', [
        <p>
          Every session of <strong>{visitor.user.email}</strong> ends, this one included: each device has to
          sign in again with a new e-mailed link. API keys are not affected.
        </p>,
        <form class="actions" method="post" action="/account/sign-out-everywhere">
          <Csrf ctx={ctx} />
          <button class="danger" type="submit">
            Sign out everywhere
          </button>
          <a href="/account">Cancel</a>
        </form>,
      ]),
    );
  });

  app.post('/account/sign-out-everywhere', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    await deps.store.deleteUserSessions(visitor.user.id);
    reply.header('set-cookie', hostCookie(SESSION_COOKIE, '', 0));
    return reply.redirect('/sign-in', 303);
  });
}
