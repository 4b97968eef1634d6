/**
 * The step-up that key creation (and a webhook endpoint's new or rotated secret) asks for when the
 * sign-in is more than ten minutes old: an
 * authenticator or recovery code when two-factor sign-in is on, else an 8-digit code e-mailed to
 * the user (10 minutes, 5 tries; the code is in the message's text, never its subject, which lock
 * screens show). An authenticator code works once (its time step is recorded). A step-up gives the
 * session a new token.
 */
import { randomInt } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { ConsoleDeps, Visitor } from './deps.js';
import { Field, ProblemSummary, blankForm, type FormState } from './forms.js';
import { Csrf, Notice, renderPage } from './layout.js';
import { fresh } from './routes-keys.js';
import { safeNext } from './routes-sign-in.js';
import { secondFactorValid } from './second-factor.js';
import { sha256 } from './security.js';

const STEP_CODE_MS = 10 * 60_000;
const STEP_CODE_TRIES = 5;

type Body = Record<string, string | undefined>;

const stepCodeHash = (sessionId: string, code: string) => sha256(`step-up\u0000${sessionId}\u0000${code}`);
export const twoFactor = (visitor: Visitor) => visitor.user.totpEnabledAt !== null;

export function registerStepUpRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  function stepUpPage(request: FastifyRequest, visitor: Visitor, next: string, form: FormState) {
    const ctx = deps.page(request);
    const sent =
      visitor.session.stepCodeHash !== null &&
      visitor.session.stepCodeExpiresAt !== null &&
      visitor.session.stepCodeExpiresAt.getTime() > Date.now();
    const codeForm = (label: string, hint: string) => (
      <form class="stack" method="post" action="/step-up" novalidate>
        <ProblemSummary problems={form.problems} />
        <Csrf ctx={ctx} />
        <input type="hidden" name="next" value={next} />
        <Field
          label={label}
          name="code"
          form={form}
          autocomplete="one-time-code"
          inputMode={twoFactor(visitor) ? 'text' : 'numeric'}
          required
          maxLength={20}
          hint={hint}
        />
        <div>
          <button type="submit">Confirm</button>
        </div>
      </form>
    );
    return renderPage(ctx, 'Confirm it is you', [
      <p>Creating a key or a webhook signing secret needs a sign-in from the last ten minutes.</p>,
      form.problems.form !== undefined && <Notice kind="error">{form.problems.form}</Notice>,
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
    return deps.send(reply, stepUpPage(request, visitor, next, blankForm()));
  });

  app.post('/step-up/send', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const next = safeNext((request.body as Body).next);
    if (twoFactor(visitor)) return reply.redirect(`/step-up?next=${encodeURIComponent(next)}`, 303);
    if (!(await deps.limiter.take(visitor.user.email, request.ip))) {
      const form = { values: {}, problems: { form: 'Too many codes were asked for: wait a few minutes.' } };
      return deps.send(reply, stepUpPage(request, visitor, next, form), 429);
    }
    const code = String(randomInt(0, 100_000_000)).padStart(8, '0');
    await deps.store.setStepCode(
      visitor.session.id,
      stepCodeHash(visitor.session.id, code),
      new Date(Date.now() + STEP_CODE_MS),
    );
    await deps.mailer.send({
      to: visitor.user.email,
      subject: 'Your ipscope console confirmation code',
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
      return deps.invalid(
        reply,
        stepUpPage(request, { ...visitor, session: refreshed }, next, {
          values: {},
          problems: { code: 'That code is not right, or it has expired.' },
        }),
      );
    }
    await deps.rotateSession(request, reply, visitor);
    return reply.redirect(next, 303);
  });
}
