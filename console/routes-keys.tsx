/**
 * The key actions (docs/api.md#authentication, "Keys in the console"): create (label required,
 * optional expiry) and revoke (after a confirmation; immediate and for good). Owners and admins
 * act. Creating a key needs a sign-in or step-up less than ten minutes old (routes-step-up.tsx asks
 * for one) and follows post/redirect/get: the new key reaches its page sealed in the flash cookie
 * (flash.ts) and is shown there once; a reload or Back shows that it was, never the key again.
 */
import type { FastifyRequest } from 'fastify';
import {
  AccountsError,
  MAX_ACTIVE_KEYS_PER_WORKSPACE,
  type Project,
  type Workspace,
} from '../accounts/index.js';
import { STEP_UP_FRESH_MS, type ConsoleDeps, type Visitor } from './deps.js';
import { clearFlash, readFlash, seal, setFlash } from './flash.js';
import { Field, ProblemSummary, blankForm, type FormState } from './forms.js';
import { KeyCount, activeKeys } from './keys-table.js';
import { Csrf, Notice, formatCount, formatDate, renderPage, type Crumb } from './layout.js';
import { PLAYGROUND_LABEL } from './playground.js';
import { keyScope, mustManage, projectScope } from './scope.js';

type Params = Record<string, string>;
type Body = Record<string, string | undefined>;

export const fresh = (visitor: Visitor, now = Date.now()) =>
  now - visitor.session.authenticatedAt.getTime() < STEP_UP_FRESH_MS;

export function projectCrumbs(
  workspace: { id: string; name: string },
  project: { id: string; name: string },
  last?: string,
): Crumb[] {
  const crumbs: Crumb[] = [
    { label: 'Workspaces', href: '/' },
    { label: workspace.name, href: `/w/${workspace.id}` },
    last === undefined
      ? { label: project.name }
      : { label: project.name, href: `/w/${workspace.id}/p/${project.id}` },
  ];
  if (last !== undefined) crumbs.push({ label: last });
  return crumbs;
}

/** `2027-01-31` as the end of that day (UTC); null for empty; undefined when malformed or past. */
function expiryOf(value: string | undefined, now: Date): Date | null | undefined {
  if (value === undefined || value.trim() === '') return null;
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined;
  const date = new Date(`${value}T23:59:59.999Z`);
  if (Number.isNaN(date.getTime()) || !date.toISOString().startsWith(value) || date <= now) return undefined;
  return date;
}

/** What the flash cookie carries from the key's creation to its page. */
interface NewKey {
  id: string;
  key: string;
}

export function registerKeyRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  async function newKeyPage(
    request: FastifyRequest,
    scope: { workspace: Workspace; project: Project },
    form: FormState,
  ) {
    const ctx = deps.page(request);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}`;
    const [keys, plan] = await Promise.all([
      deps.store.listKeys({ workspaceId: scope.workspace.id }),
      deps.planLimits(scope.workspace.plan),
    ]);
    const active = activeKeys(keys, new Date()).length;
    const full = active >= MAX_ACTIVE_KEYS_PER_WORKSPACE;
    return renderPage(
      ctx,
      'Create an API key',
      [
        <KeyCount active={active} />,
        <p class="muted" id="plan-limits">
          Every key of the workspace shares its plan ({plan.name === 'free' ? 'Free' : plan.name}):{' '}
          {formatCount(plan.requestsPerMinute)} requests a minute and {formatCount(plan.monthlyQuota)} a month
          {scope.project.monthlyCap !== null &&
            `; this project's keys stop at ${formatCount(scope.project.monthlyCap)} a month (its cap)`}
          .
        </p>,
        full && <ProblemSummary problems={form.problems} />,
        full ? (
          <p>
            <a href={base}>Back to {scope.project.name}</a> to revoke a key.
          </p>
        ) : (
          <form class="stack" method="post" action={`${base}/keys`} novalidate>
            <ProblemSummary problems={form.problems} />
            <Csrf ctx={ctx} />
            <Field
              label="Label"
              name="label"
              form={form}
              required
              maxLength={100}
              hint='What the key is for, e.g. "billing service".'
            />
            <Field
              label="Expires on (optional)"
              name="expires"
              form={form}
              type="date"
              min={new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}
              hint="Empty: the key never expires. It stops working at the end of that day (UTC)."
            />
            <div class="actions">
              <button type="submit">Create key</button>
              <a href={base}>Cancel</a>
            </div>
          </form>
        ),
      ],
      projectCrumbs(scope.workspace, scope.project, 'New key'),
    );
  }

  app.get('/w/:ws/p/:prj/keys/new', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}`;
    if (!fresh(visitor))
      return reply.redirect(`/step-up?next=${encodeURIComponent(`${base}/keys/new`)}`, 303);
    return deps.send(reply, await newKeyPage(request, scope, blankForm()));
  });

  app.post('/w/:ws/p/:prj/keys', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}`;
    if (!fresh(visitor))
      return reply.redirect(`/step-up?next=${encodeURIComponent(`${base}/keys/new`)}`, 303);
    const body = request.body as Body;
    const label = (body.label ?? '').trim();
    const now = new Date();
    const expiresAt = expiryOf(body.expires, now);
    const form: FormState = { values: { label: body.label, expires: body.expires }, problems: {} };
    if (label.length < 1 || label.length > 100) form.problems.label = 'A label has 1 to 100 characters.';
    else if (label === PLAYGROUND_LABEL)
      form.problems.label = `The label "${PLAYGROUND_LABEL}" is kept for the playground's key: choose another.`;
    if (expiresAt === undefined)
      form.problems.expires = 'The expiry is a future date like 2027-01-31, or empty for never.';
    let created;
    if (expiresAt !== undefined && form.problems.label === undefined) {
      try {
        created = await deps.store.createKey(
          { projectId: scope.project.id, label, expiresAt, createdBy: visitor.user.id },
          now,
        );
      } catch (error) {
        if (!(error instanceof AccountsError)) throw error;
        form.problems.form =
          error.code === 'key_limit_reached'
            ? `The workspace has ${MAX_ACTIVE_KEYS_PER_WORKSPACE} active keys, the most allowed: revoke one first.`
            : error.message;
      }
    }
    if (created === undefined) return deps.invalid(reply, await newKeyPage(request, scope, form));
    const shown: NewKey = { id: created.record.id, key: created.key };
    setFlash(reply, seal(visitor.token, `new-key:${created.record.id}`, shown));
    return reply.redirect(`${base}/keys/${created.record.id}/created`, 303);
  });

  app.get('/w/:ws/p/:prj/keys/:key/created', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, key } = request.params as Params;
    const scope = await keyScope(deps, visitor, ws!, prj!, key!);
    mustManage(scope);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}`;
    const shown = readFlash<NewKey>(request, visitor.token, `new-key:${scope.key.id}`);
    const record = scope.key;
    const about = (
      <p>
        Label: {record.label}; expires: {record.expiresAt === null ? 'never' : formatDate(record.expiresAt)}.
        Send it as <code>Authorization: Bearer &lt;key&gt;</code>.
      </p>
    );
    const back = (
      <p>
        <a href={base}>Back to {scope.project.name}</a>
      </p>
    );
    const crumbs = projectCrumbs(scope.workspace, scope.project, 'New key');
    if (shown === null || shown.id !== record.id) {
      return deps.send(
        reply,
        renderPage(
          deps.page(request),
          'This key was shown once',
          [
            <Notice>
              The key <span class="mono">{record.display}</span> was shown when it was created and cannot be
              shown again. If it was not copied, revoke it and create another.
            </Notice>,
            about,
            back,
          ],
          crumbs,
        ),
      );
    }
    clearFlash(reply);
    return deps.send(
      reply,
      renderPage(
        deps.page(request),
        'Your new API key',
        [
          <Notice kind="ok">
            Copy the key now: it is shown only this once. Reloading this page will not show it again;
            afterwards the console shows only {record.display}.
          </Notice>,
          <div class="secret">
            <output id="new-key" aria-label="New API key">
              {shown.key}
            </output>
            <button type="button" data-copy="new-key">
              Copy
            </button>
          </div>,
          about,
          back,
        ],
        crumbs,
      ),
    );
  });

  app.get('/w/:ws/p/:prj/keys/:key/revoke', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, key } = request.params as Params;
    const scope = await keyScope(deps, visitor, ws!, prj!, key!);
    mustManage(scope);
    const ctx = deps.page(request);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}`;
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Revoke this key?',
        [
          <p>
            <strong>{scope.key.label}</strong> (<span class="mono">{scope.key.display}</span>) stops working
            at once: every request with it gets 401. This cannot be undone.
          </p>,
          <form class="actions" method="post" action={`${base}/keys/${scope.key.id}/revoke`}>
            <Csrf ctx={ctx} />
            <button class="danger" type="submit">
              Revoke key
            </button>
            <a href={base}>Cancel</a>
          </form>,
        ],
        projectCrumbs(scope.workspace, scope.project, 'Revoke key'),
      ),
    );
  });

  app.post('/w/:ws/p/:prj/keys/:key/revoke', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, key } = request.params as Params;
    const scope = await keyScope(deps, visitor, ws!, prj!, key!);
    mustManage(scope);
    let done = 'revoked';
    try {
      await deps.store.revokeKey(scope.key.id);
    } catch (error) {
      if (!(error instanceof AccountsError) || error.code !== 'already_revoked') throw error;
      done = 'already-revoked';
    }
    return reply.redirect(`/w/${scope.workspace.id}/p/${scope.project.id}?done=${done}`, 303);
  });
}
