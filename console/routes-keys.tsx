/**
 * A project's page (its API keys, its usage, its cap) and the key actions
 * (docs/api.md#authentication, "Keys in the console"): create (label required, optional expiry;
 * shown once with a copy button), revoke (after a confirmation; immediate and for good). Owners and
 * admins act; members see. Creating a key needs a sign-in or step-up less than ten minutes old
 * (routes-account.tsx asks for one).
 */
import { AccountsError, MAX_ACTIVE_KEYS_PER_WORKSPACE, keyStatus } from '../accounts/index.js';
import { STEP_UP_FRESH_MS, type ConsoleDeps, type Visitor } from './deps.js';
import { Csrf, Notice, formatCount, formatDate, formatTime, renderPage, type Crumb } from './layout.js';
import { PLAYGROUND_LABEL } from './playground.js';
import { keyScope, mustManage, projectScope } from './scope.js';
import { DailyChart, Meter, workspaceUsage } from './usage.js';

type Params = Record<string, string>;
type Body = Record<string, string | undefined>;

const NOTICES: Record<string, string> = {
  revoked: 'The key is revoked: requests with it now get 401.',
  cap: 'The monthly cap is saved.',
};

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

export function registerKeyRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  app.get('/w/:ws/p/:prj', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    const { workspace, project } = scope;
    const ctx = deps.page(request);
    const [keys, usage] = await Promise.all([
      deps.store.listKeys({ projectId: project.id }),
      workspaceUsage(deps, workspace),
    ]);
    const base = `/w/${workspace.id}/p/${project.id}`;
    const done = NOTICES[String((request.query as Record<string, unknown>).done)];
    const now = new Date();
    return deps.send(
      reply,
      renderPage(
        ctx,
        project.name,
        [
          done && <Notice kind="ok">{done}</Notice>,
          <section class="card">
            <h2>API keys</h2>
            <div class="actions">
              {scope.manages && (
                <a class="button" href={`${base}/keys/new`}>
                  Create a key
                </a>
              )}
              {scope.manages && (
                <a class="button secondary" href={`${base}/playground`}>
                  Playground
                </a>
              )}
            </div>
            {keys.length === 0 ? (
              <p>No keys yet.</p>
            ) : (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Label</th>
                      <th scope="col">Key</th>
                      <th scope="col">Created</th>
                      <th scope="col">Last used</th>
                      <th scope="col">Expires</th>
                      <th scope="col">State</th>
                      <th scope="col" class="num">
                        This month
                      </th>
                      {scope.manages && <th scope="col">Action</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {keys.map((k) => {
                      const state = keyStatus(k, now);
                      return (
                        <tr>
                          <td>
                            {k.label}
                            {k.label === PLAYGROUND_LABEL && (
                              <span class="muted"> (used by the playground)</span>
                            )}
                          </td>
                          <td class="mono">{k.display}</td>
                          <td>{formatDate(k.createdAt)}</td>
                          <td>{formatTime(k.lastUsedAt)}</td>
                          <td>{k.expiresAt === null ? 'never' : formatDate(k.expiresAt)}</td>
                          <td>
                            <span class={`state ${state}`}>{state}</span>
                          </td>
                          <td class="num">{formatCount(usage.byKey.get(k.id) ?? 0)}</td>
                          {scope.manages && (
                            <td>
                              {state === 'active' && (
                                <a
                                  href={`${base}/keys/${k.id}/revoke`}
                                  aria-label={`Revoke ${k.label} (${k.display})`}
                                >
                                  Revoke
                                </a>
                              )}
                            </td>
                          )}
                        </tr>
                      );
                    })}
                  </tbody>
                </table>
              </div>
            )}
            <p class="muted">
              A workspace has at most {MAX_ACTIVE_KEYS_PER_WORKSPACE} active keys; revoked and expired keys do
              not count.
            </p>
          </section>,
          <section class="card">
            <h2>Usage this month</h2>
            <Meter
              used={usage.byProject.get(project.id) ?? 0}
              limit={project.monthlyCap}
              label="Project cap"
            />
            <Meter used={usage.used} limit={usage.plan.monthlyQuota} label="Workspace quota" />
            <DailyChart
              month={usage.month}
              daily={usage.daily.filter((d) => d.projectId === project.id)}
              title={`Project ${project.name}`}
            />
            {scope.manages && (
              <form class="stack" method="post" action={`${base}/cap`}>
                <h3>Monthly cap</h3>
                <Csrf ctx={ctx} />
                <label>
                  Requests per month for this project's keys
                  <input
                    name="cap"
                    inputMode="numeric"
                    pattern="[0-9]*"
                    value={project.monthlyCap === null ? '' : String(project.monthlyCap)}
                  />
                  <span class="hint">Leave empty for no cap (only the workspace quota applies).</span>
                </label>
                <div>
                  <button type="submit">Save cap</button>
                </div>
              </form>
            )}
          </section>,
        ],
        projectCrumbs(workspace, project),
      ),
    );
  });

  app.post('/w/:ws/p/:prj/cap', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const raw = ((request.body as Body).cap ?? '').trim().replace(/[ ,_]/g, '');
    if (raw !== '' && (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(Number(raw)))) {
      return deps.error(
        request,
        reply,
        400,
        'A cap is a whole number of requests, e.g. 5000, or empty for none.',
      );
    }
    await deps.store.setProjectCap(scope.project.id, raw === '' ? null : Number(raw));
    return reply.redirect(`/w/${scope.workspace.id}/p/${scope.project.id}?done=cap`, 303);
  });

  app.get('/w/:ws/p/:prj/keys/new', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}`;
    if (!fresh(visitor))
      return reply.redirect(`/step-up?next=${encodeURIComponent(`${base}/keys/new`)}`, 303);
    const ctx = deps.page(request);
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Create an API key',
        <form class="stack" method="post" action={`${base}/keys`}>
          <Csrf ctx={ctx} />
          <label>
            Label
            <input name="label" required maxLength={100} />
            <span class="hint">What the key is for, e.g. "billing service".</span>
          </label>
          <label>
            Expires on (optional)
            <input type="date" name="expires" />
            <span class="hint">
              Empty: the key never expires. It stops working at the end of that day (UTC).
            </span>
          </label>
          <div>
            <button type="submit">Create key</button>
          </div>
        </form>,
        projectCrumbs(scope.workspace, scope.project, 'New key'),
      ),
    );
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
    if (label.length < 1 || label.length > 100)
      return deps.error(request, reply, 400, 'A label has 1 to 100 characters.');
    if (label === PLAYGROUND_LABEL)
      return deps.error(
        request,
        reply,
        400,
        `The label "${PLAYGROUND_LABEL}" is kept for the playground's key.`,
      );
    if (expiresAt === undefined)
      return deps.error(request, reply, 400, 'The expiry is a future date like 2027-01-31, or empty.');
    let created;
    try {
      created = await deps.store.createKey({ projectId: scope.project.id, label, expiresAt }, now);
    } catch (error) {
      if (error instanceof AccountsError) return deps.error(request, reply, 400, error.message);
      throw error;
    }
    const ctx = deps.page(request);
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Your new API key',
        [
          <Notice kind="ok">
            Copy the key now: it is shown only this once. Afterwards the console shows only{' '}
            {created.record.display}.
          </Notice>,
          <div class="secret">
            <output id="new-key" aria-label="New API key">
              {created.key}
            </output>
            <button type="button" data-copy="new-key">
              Copy
            </button>
          </div>,
          <p>
            Send it as <code>Authorization: Bearer &lt;key&gt;</code>. Label: {created.record.label}; expires:{' '}
            {created.record.expiresAt === null ? 'never' : formatDate(created.record.expiresAt)}.
          </p>,
          <p>
            <a href={base}>Back to {scope.project.name}</a>
          </p>,
        ],
        projectCrumbs(scope.workspace, scope.project, 'New key'),
      ),
      201,
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
    try {
      await deps.store.revokeKey(scope.key.id);
    } catch (error) {
      if (error instanceof AccountsError) return deps.error(request, reply, 400, error.message);
      throw error;
    }
    return reply.redirect(`/w/${scope.workspace.id}/p/${scope.project.id}?done=revoked`, 303);
  });
}
