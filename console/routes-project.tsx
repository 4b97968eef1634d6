/**
 * A project's page: its API keys (keys-table.tsx) with the workspace's count against the 25-key
 * limit, links to its watchlist and webhooks (routes-watch.tsx, routes-webhooks.tsx) with their
 * counts, its usage against its cap and the workspace quota, and the cap's form (owners and
 * admins), which shows its problem in place.
 */
import type { FastifyRequest } from 'fastify';
import type { ConsoleDeps } from './deps.js';
import { Field, ProblemSummary, blankForm, type FormState } from './forms.js';
import { KeyCount, KeysTable, activeKeys } from './keys-table.js';
import { Csrf, Notice, renderPage } from './layout.js';
import { projectCrumbs } from './routes-keys.js';
import { projectScope, mustManage, type WorkspaceScope } from './scope.js';
import type { Project } from '../accounts/index.js';
import { MAX_ACTIVE_KEYS_PER_WORKSPACE } from '../accounts/index.js';
import { DailyChart, Meter, workspaceUsage } from './usage.js';

type Params = Record<string, string>;
type Body = Record<string, string | undefined>;

const NOTICES: Record<string, string> = {
  revoked: 'The key is revoked: requests with it now get 401.',
  'already-revoked': 'The key had been revoked already.',
  cap: 'The monthly cap is saved.',
};

export function registerProjectRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  async function projectPage(
    request: FastifyRequest,
    scope: WorkspaceScope & { project: Project },
    capForm: FormState,
  ) {
    const { workspace, project } = scope;
    const ctx = deps.page(request);
    const [keys, usage, watched, endpoints] = await Promise.all([
      deps.store.listKeys({ workspaceId: workspace.id }),
      workspaceUsage(deps, workspace),
      deps.store.listWatchEntries(project.id),
      deps.store.listEndpoints(project.id),
    ]);
    const base = `/w/${workspace.id}/p/${project.id}`;
    const done = NOTICES[String((request.query as Record<string, unknown>).done)];
    const now = new Date();
    const active = activeKeys(keys, now).length;
    return renderPage(
      ctx,
      project.name,
      [
        done && <Notice kind="ok">{done}</Notice>,
        <section class="card">
          <h2>API keys</h2>
          <KeyCount active={active} />
          {scope.manages && (
            <div class="actions">
              {active < MAX_ACTIVE_KEYS_PER_WORKSPACE && (
                <a class="button" href={`${base}/keys/new`}>
                  Create a key
                </a>
              )}
              <a class="button secondary" href={`${base}/playground`}>
                Playground
              </a>
            </div>
          )}
          <KeysTable
            keys={keys.filter((k) => k.projectId === project.id)}
            usage={usage.byKey}
            base={base}
            manages={scope.manages}
            now={now}
          />
        </section>,
        <section class="card">
          <h2>Watches and webhooks</h2>
          <p id="watch-summary">
            {watched.length === 1 ? '1 watch entry' : `${watched.length} watch entries`},{' '}
            {endpoints.length === 1 ? '1 webhook endpoint' : `${endpoints.length} webhook endpoints`}: the
            events of what changed for them in each new data release.
          </p>
          <div class="actions">
            <a class="button secondary" href={`${base}/watch`}>
              Watchlist
            </a>
            <a class="button secondary" href={`${base}/webhooks`}>
              Webhooks
            </a>
          </div>
        </section>,
        <section class="card">
          <h2>Usage this month</h2>
          <Meter used={usage.byProject.get(project.id) ?? 0} limit={project.monthlyCap} label="Project cap" />
          <Meter used={usage.used} limit={usage.plan.monthlyQuota} label="Workspace quota" />
          <DailyChart
            month={usage.month}
            daily={usage.daily.filter((d) => d.projectId === project.id)}
            title={`Project ${project.name}`}
          />
          {scope.manages && (
            <form class="stack" method="post" action={`${base}/cap`} novalidate>
              <h3>Monthly cap</h3>
              <ProblemSummary problems={capForm.problems} />
              <Csrf ctx={ctx} />
              <Field
                label="Requests per month for this project's keys"
                name="cap"
                form={capForm}
                inputMode="numeric"
                maxLength={20}
                hint="Leave empty for no cap (only the workspace quota applies)."
              />
              <div>
                <button type="submit">Save cap</button>
              </div>
            </form>
          )}
        </section>,
      ],
      projectCrumbs(workspace, project),
    );
  }

  app.get('/w/:ws/p/:prj', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    const cap = scope.project.monthlyCap;
    return deps.send(
      reply,
      await projectPage(request, scope, blankForm({ cap: cap === null ? '' : String(cap) })),
    );
  });

  app.post('/w/:ws/p/:prj/cap', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const sent = (request.body as Body).cap ?? '';
    const raw = sent.trim().replace(/[ ,_]/g, '');
    if (raw !== '' && (!/^\d{1,15}$/.test(raw) || !Number.isSafeInteger(Number(raw)))) {
      const form = {
        values: { cap: sent },
        problems: { cap: 'A cap is a whole number of requests, e.g. 5000, or empty for none.' },
      };
      return deps.invalid(reply, await projectPage(request, scope, form));
    }
    await deps.store.setProjectCap(scope.project.id, raw === '' ? null : Number(raw));
    return reply.redirect(`/w/${scope.workspace.id}/p/${scope.project.id}?done=cap`, 303);
  });
}
