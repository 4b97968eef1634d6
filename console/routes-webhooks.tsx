/**
 * A project's webhook endpoints (docs/decisions/0034-watchlists-and-webhooks.md): the list (URL,
 * kinds, enabled or disabled, failing since), the form that adds one (its URL through the same
 * SSRF guard and settings as the admin CLI, server/watch/endpoints.ts), the signing secret shown
 * once after creation and after each rotation (post/redirect/get, sealed in the flash cookie like
 * a new key), enable and disable, a test event (the CLI's `webhooks test` body), removal after a
 * confirmation, and an endpoint's delivery log with a redeliver button per event. Every member
 * sees endpoints and logs; owners and admins act; a new or rotated secret needs a sign-in or
 * step-up under ten minutes old, like a key.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccountsError, type Project } from '../accounts/index.js';
import type { DeliveryAttempt, WebhookEndpoint } from '../accounts/watch-types.js';
import { EVENT_KINDS } from '../server/watch/compute.js';
import {
  MAX_DESCRIPTION_CHARS,
  SECRET_ROTATION_MS,
  endpointProblems,
  testEventPayload,
} from '../server/watch/endpoints.js';
import type { ConsoleDeps, Visitor } from './deps.js';
import { clearFlash, readFlash, seal, setFlash } from './flash.js';
import { CheckboxesField, Field, ProblemSummary, blankForm, tickedOf, type FormState } from './forms.js';
import { Csrf, Notice, formatDate, formatTime, renderPage, type Crumb, type PageContext } from './layout.js';
import { fresh, projectCrumbs } from './routes-keys.js';
import { endpointScope, mustManage, projectScope, type WorkspaceScope } from './scope.js';

type Params = Record<string, string>;
type Body = Record<string, string | undefined>;
type Scope = WorkspaceScope & { project: Project };
type EndpointScope = Scope & { endpoint: WebhookEndpoint };

/** Attempts the endpoint page lists, newest first. */
const LOG_ROWS = 50;
/** Characters of a reply's first bytes the log shows (the store keeps 256 bytes). */
const REPLY_SHOWN = 120;
/** An event id as the store makes them: `evt_` + 26 base32 (computed) or `evt_test_` + 16 (test). */
const EVENT_ID = /^evt_(?:[a-z2-7]{26}|test_[0-9a-z]{16})$/;

/** What the flash cookie carries from a creation or rotation to the secret's page. */
interface ShownSecret {
  id: string;
  secret: string;
  rotated: boolean;
}

const kindsText = (e: WebhookEndpoint) => (e.kinds.length === 0 ? 'every kind' : e.kinds.join(', '));

function EndpointState({ endpoint }: { endpoint: WebhookEndpoint }) {
  if (endpoint.disabledAt !== null)
    return (
      <>
        <span class="state revoked">disabled</span>{' '}
        <span class="date">since {formatTime(endpoint.disabledAt)}</span>
      </>
    );
  if (endpoint.failingSince !== null)
    return (
      <>
        <span class="state failing">failing</span>{' '}
        <span class="date">since {formatTime(endpoint.failingSince)}</span>
      </>
    );
  return <span class="state active">enabled</span>;
}

const sentence = (message: string) => `${message.charAt(0).toUpperCase()}${message.slice(1)}.`;

const NOTICES: Record<string, string> = {
  enabled: 'The endpoint is enabled: its waiting deliveries are sent again.',
  disabled: 'The endpoint is disabled: deliveries wait until it is enabled again.',
  redelivered: 'The event is queued again: it is sent within a few seconds, with the same webhook-id.',
  removed: 'The endpoint is removed, with its deliveries and its log.',
};

export function registerWebhookRoutes(deps: ConsoleDeps): void {
  const { app } = deps;
  const baseOf = (scope: Scope) => `/w/${scope.workspace.id}/p/${scope.project.id}/webhooks`;
  const crumbs = (scope: Scope, last?: Crumb[]): Crumb[] => {
    const list = projectCrumbs(scope.workspace, scope.project, 'Webhooks');
    if (last === undefined) return list;
    list[list.length - 1] = { label: 'Webhooks', href: baseOf(scope) };
    return [...list, ...last];
  };
  /** A step-up first when the sign-in is over ten minutes old; null when fresh. */
  const stepUp = (visitor: Visitor, reply: FastifyReply, next: string) =>
    fresh(visitor) ? null : reply.redirect(`/step-up?next=${encodeURIComponent(next)}`, 303);

  async function listPage(request: FastifyRequest, scope: Scope) {
    const ctx = deps.page(request);
    const base = baseOf(scope);
    const endpoints = await deps.store.listEndpoints(scope.project.id);
    const done = NOTICES[String((request.query as Record<string, unknown>).done)];
    return renderPage(
      ctx,
      'Webhooks',
      [
        done && <Notice kind="ok">{done}</Notice>,
        <p class="muted">
          Each event of the project's{' '}
          <a href={`/w/${scope.workspace.id}/p/${scope.project.id}/watch`}>watchlist</a> is sent to its
          endpoints as a signed POST (Standard Webhooks: verify the <code>webhook-signature</code> header with
          the endpoint's secret).
        </p>,
        <section class="card">
          <h2>Endpoints</h2>
          {scope.manages && (
            <div class="actions">
              <a class="button" href={`${base}/new`}>
                Add an endpoint
              </a>
            </div>
          )}
          {endpoints.length === 0 ? (
            <p class="empty">
              No endpoints yet.{' '}
              {scope.manages
                ? 'Add one to receive the events.'
                : 'An owner or admin of the workspace can add one.'}
            </p>
          ) : (
            <table class="cards" id="endpoints">
              <caption class="muted">Oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">URL</th>
                  <th scope="col">Receives</th>
                  <th scope="col">State</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {endpoints.map((e) => (
                  <tr>
                    <td data-label="URL">
                      <a class="break" href={`${base}/${e.id}`}>
                        {e.url}
                      </a>
                    </td>
                    <td data-label="Receives">{kindsText(e)}</td>
                    <td data-label="State">
                      <EndpointState endpoint={e} />
                    </td>
                    <td data-label="Description">{e.description || '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>,
      ],
      crumbs(scope),
    );
  }

  function newPage(request: FastifyRequest, scope: Scope, form: FormState, kinds: readonly string[]) {
    const ctx = deps.page(request);
    const base = baseOf(scope);
    const http = deps.watch.guard.allowHttp;
    return renderPage(
      ctx,
      'Add a webhook endpoint',
      [
        <form class="stack" method="post" action={base} novalidate>
          <ProblemSummary problems={form.problems} />
          <Csrf ctx={ctx} />
          <Field
            label="URL"
            name="url"
            form={form}
            required
            maxLength={2000}
            autocomplete="url"
            hint={`https://… on a public address${http ? ' (http too on this server)' : ''}; redirects are not followed.`}
          />
          <CheckboxesField
            legend="Event kinds"
            name="kind"
            options={EVENT_KINDS}
            checked={kinds}
            problem={form.problems.kinds}
            hint="None ticked: every kind."
          />
          <Field
            label="Description (optional)"
            name="description"
            form={form}
            maxLength={MAX_DESCRIPTION_CHARS}
            hint="What the endpoint is for."
          />
          <div class="actions">
            <button type="submit">Add endpoint</button>
            <a href={base}>Cancel</a>
          </div>
        </form>,
      ],
      crumbs(scope, [{ label: 'New endpoint' }]),
    );
  }

  function LogTable({
    attempts,
    scope,
    ctx,
  }: {
    attempts: DeliveryAttempt[];
    scope: EndpointScope;
    ctx: PageContext;
  }) {
    const seen = new Set<string>();
    return (
      <table class="cards" id="delivery-log">
        <caption class="muted">Attempts, newest first (the last {LOG_ROWS})</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col" class="num">
              Attempt
            </th>
            <th scope="col">Status</th>
            <th scope="col" class="num">
              Duration
            </th>
            <th scope="col">Reply</th>
            {scope.manages && <th scope="col">Action</th>}
          </tr>
        </thead>
        <tbody>
          {attempts.map((a) => {
            const first = !seen.has(a.eventId);
            seen.add(a.eventId);
            const reply = a.error ?? a.replyHead;
            return (
              <tr>
                <td data-label="Time">
                  <span class="date">{formatTime(a.startedAt)}</span>
                </td>
                <td data-label="Event">
                  <span class="mono break">{a.eventId}</span>
                </td>
                <td data-label="Attempt" class="num">
                  {a.attempt}
                </td>
                <td data-label="Status">
                  <span class={a.ok ? 'state active' : 'state revoked'}>
                    {a.status === null ? 'no reply' : a.status}
                  </span>
                </td>
                <td data-label="Duration" class="num">
                  {Math.round(a.durationMs)} ms
                </td>
                <td data-label="Reply">
                  {reply === '' ? (
                    <span class="muted">empty</span>
                  ) : (
                    <code class="break">
                      {reply.length > REPLY_SHOWN ? `${reply.slice(0, REPLY_SHOWN)}…` : reply}
                    </code>
                  )}
                </td>
                {scope.manages && (
                  <td data-label="Action">
                    {first && <RedeliverButton scope={scope} eventId={a.eventId} ctx={ctx} />}
                  </td>
                )}
              </tr>
            );
          })}
        </tbody>
      </table>
    );
  }

  function RedeliverButton({
    scope,
    eventId,
    ctx,
  }: {
    scope: EndpointScope;
    eventId: string;
    ctx: PageContext;
  }) {
    return (
      <form class="inline" method="post" action={`${baseOf(scope)}/${scope.endpoint.id}/redeliver`}>
        <Csrf ctx={ctx} />
        <input type="hidden" name="event" value={eventId} />
        <button class="secondary" type="submit" aria-label={`Redeliver ${eventId}`}>
          Redeliver
        </button>
      </form>
    );
  }

  async function endpointPage(request: FastifyRequest, scope: EndpointScope) {
    const ctx = deps.page(request);
    const base = `${baseOf(scope)}/${scope.endpoint.id}`;
    const { endpoint } = scope;
    const attempts = await deps.store.listAttempts(endpoint.id, LOG_ROWS);
    const query = request.query as Record<string, unknown>;
    const tested = query.done === 'test' && typeof query.event === 'string' && EVENT_ID.test(query.event);
    const done = NOTICES[String(query.done)];
    return renderPage(
      ctx,
      'Webhook endpoint',
      [
        tested && (
          <Notice kind="ok">
            Test event <span class="mono break">{String(query.event)}</span> is queued
            {endpoint.disabledAt === null
              ? ': it is sent within a few seconds. Reload to see it in the log.'
              : ', but the endpoint is disabled: it is sent once the endpoint is enabled again.'}
          </Notice>
        ),
        done && <Notice kind="ok">{done}</Notice>,
        <section class="card">
          <h2>Endpoint</h2>
          <dl class="facts">
            <dt>URL</dt>
            <dd class="mono break" id="endpoint-url">
              {endpoint.url}
            </dd>
            <dt>Receives</dt>
            <dd>{kindsText(endpoint)}</dd>
            <dt>State</dt>
            <dd id="endpoint-state">
              <EndpointState endpoint={endpoint} />
            </dd>
            <dt>Description</dt>
            <dd>{endpoint.description || '—'}</dd>
            <dt>Added</dt>
            <dd>{formatDate(endpoint.createdAt)}</dd>
            <dt>Secret</dt>
            <dd>
              Shown once when it was made
              {endpoint.rotating && '; the previous one still signs too (rotated less than a day ago)'}.
            </dd>
          </dl>
          {scope.manages && (
            <div class="actions">
              <form class="inline" method="post" action={`${base}/test`}>
                <Csrf ctx={ctx} />
                <button type="submit">Send a test event</button>
              </form>
              <form class="inline" method="post" action={`${base}/enabled`}>
                <Csrf ctx={ctx} />
                <input type="hidden" name="enabled" value={endpoint.disabledAt === null ? 'false' : 'true'} />
                <button class="secondary" type="submit">
                  {endpoint.disabledAt === null ? 'Disable' : 'Enable'}
                </button>
              </form>
              <form class="inline" method="post" action={`${base}/rotate`}>
                <Csrf ctx={ctx} />
                <button class="secondary" type="submit">
                  Rotate the secret
                </button>
              </form>
              <a href={`${base}/remove`}>Remove</a>
            </div>
          )}
          {scope.manages && (
            <p class="muted">
              A rotated-out secret keeps signing for 24 hours (each delivery carries both signatures).
            </p>
          )}
        </section>,
        <section class="card">
          <h2>Delivery log</h2>
          {attempts.length === 0 ? (
            <p class="empty">
              No attempts yet. {scope.manages && 'Send a test event to see how the endpoint answers.'}
            </p>
          ) : (
            <LogTable attempts={attempts} scope={scope} ctx={ctx} />
          )}
        </section>,
      ],
      crumbs(scope, [{ label: 'Endpoint' }]),
    );
  }

  app.get('/w/:ws/p/:prj/webhooks', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    return deps.send(reply, await listPage(request, scope));
  });

  app.get('/w/:ws/p/:prj/webhooks/new', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const refused = stepUp(visitor, reply, `${baseOf(scope)}/new`);
    if (refused) return refused;
    return deps.send(reply, newPage(request, scope, blankForm(), []));
  });

  app.post('/w/:ws/p/:prj/webhooks', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const refused = stepUp(visitor, reply, `${baseOf(scope)}/new`);
    if (refused) return refused;
    const body = request.body as Body;
    const url = (body.url ?? '').trim();
    const description = (body.description ?? '').trim();
    const kinds = tickedOf(body, 'kind', EVENT_KINDS);
    const form: FormState = { values: { url: body.url, description: body.description }, problems: {} };
    if (url === '') form.problems.url = 'Type the URL that receives the events: https://…';
    else {
      const problems = await endpointProblems({ url, kinds, description }, deps.watch.guard);
      if (problems.url !== undefined)
        form.problems.url = `This URL cannot receive webhooks: ${problems.url}.`;
      if (problems.kinds !== undefined) form.problems.kinds = sentence(problems.kinds);
      if (problems.description !== undefined) form.problems.description = sentence(problems.description);
    }
    if (Object.values(form.problems).some((p) => p !== undefined))
      return deps.invalid(reply, newPage(request, scope, form, kinds));
    const created = await deps.store.createEndpoint({ projectId: scope.project.id, url, kinds, description });
    const shown: ShownSecret = { id: created.endpoint.id, secret: created.secret, rotated: false };
    setFlash(reply, seal(visitor.token, `webhook-secret:${created.endpoint.id}`, shown));
    return reply.redirect(`${baseOf(scope)}/${created.endpoint.id}/secret`, 303);
  });

  app.get('/w/:ws/p/:prj/webhooks/:hook', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    return deps.send(reply, await endpointPage(request, scope));
  });

  app.get('/w/:ws/p/:prj/webhooks/:hook/secret', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    mustManage(scope);
    const base = `${baseOf(scope)}/${scope.endpoint.id}`;
    const shown = readFlash<ShownSecret>(request, visitor.token, `webhook-secret:${scope.endpoint.id}`);
    const back = (
      <p>
        <a href={base}>To the endpoint</a>: send a test event, see the delivery log.
      </p>
    );
    const page = crumbs(scope, [{ label: 'Endpoint', href: base }, { label: 'Secret' }]);
    if (shown === null || shown.id !== scope.endpoint.id) {
      return deps.send(
        reply,
        renderPage(
          deps.page(request),
          'This secret was shown once',
          [
            <Notice>
              The endpoint's signing secret was shown when it was made and cannot be shown again. If it was
              not copied, rotate it on the endpoint's page to get a new one.
            </Notice>,
            back,
          ],
          page,
        ),
      );
    }
    clearFlash(reply);
    return deps.send(
      reply,
      renderPage(
        deps.page(request),
        shown.rotated ? 'The new signing secret' : "Your endpoint's signing secret",
        [
          <Notice kind="ok">
            Copy the secret now: it is shown only this once. Reloading this page will not show it again.
            {shown.rotated && ' The previous secret keeps signing for 24 hours, beside this one.'}
          </Notice>,
          <div class="secret">
            <output id="webhook-secret" aria-label="Signing secret">
              {shown.secret}
            </output>
            <button type="button" data-copy="webhook-secret">
              Copy
            </button>
          </div>,
          <p>
            Endpoint <span class="mono break">{scope.endpoint.url}</span>. Verify each delivery's{' '}
            <code>webhook-signature</code> with it, e.g. with a Standard Webhooks library.
          </p>,
          back,
        ],
        page,
      ),
    );
  });

  app.post('/w/:ws/p/:prj/webhooks/:hook/rotate', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    mustManage(scope);
    const base = `${baseOf(scope)}/${scope.endpoint.id}`;
    const refused = stepUp(visitor, reply, base);
    if (refused) return refused;
    const secret = await deps.store.rotateEndpointSecret(
      scope.endpoint.id,
      new Date(Date.now() + SECRET_ROTATION_MS),
    );
    const shown: ShownSecret = { id: scope.endpoint.id, secret, rotated: true };
    setFlash(reply, seal(visitor.token, `webhook-secret:${scope.endpoint.id}`, shown));
    return reply.redirect(`${base}/secret`, 303);
  });

  app.post('/w/:ws/p/:prj/webhooks/:hook/test', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    mustManage(scope);
    const eventId = await deps.store.createTestEvent(scope.endpoint.id, (id) => testEventPayload(id));
    return reply.redirect(`${baseOf(scope)}/${scope.endpoint.id}?done=test&event=${eventId}`, 303);
  });

  app.post('/w/:ws/p/:prj/webhooks/:hook/enabled', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    mustManage(scope);
    const sent = (request.body as Body).enabled;
    if (sent !== 'true' && sent !== 'false')
      return deps.error(request, reply, 400, 'The form was not understood: reload the page and try again.');
    await deps.store.setEndpointEnabled(scope.endpoint.id, sent === 'true');
    const done = sent === 'true' ? 'enabled' : 'disabled';
    return reply.redirect(`${baseOf(scope)}/${scope.endpoint.id}?done=${done}`, 303);
  });

  app.post('/w/:ws/p/:prj/webhooks/:hook/redeliver', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    mustManage(scope);
    const eventId = (request.body as Body).event ?? '';
    const missing = () =>
      deps.error(request, reply, 404, 'That event was never sent to this endpoint: nothing to send again.');
    if (!EVENT_ID.test(eventId)) return missing();
    try {
      await deps.store.redeliver(eventId, scope.endpoint.id);
    } catch (error) {
      if (!(error instanceof AccountsError) || error.code !== 'not_found') throw error;
      return missing();
    }
    return reply.redirect(`${baseOf(scope)}/${scope.endpoint.id}?done=redelivered`, 303);
  });

  app.get('/w/:ws/p/:prj/webhooks/:hook/remove', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    mustManage(scope);
    const ctx = deps.page(request);
    const base = `${baseOf(scope)}/${scope.endpoint.id}`;
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Remove this endpoint?',
        [
          <p>
            <strong class="mono break">{scope.endpoint.url}</strong> gets no more events: its waiting
            deliveries and its delivery log are deleted. This cannot be undone.
          </p>,
          <form class="actions" method="post" action={`${base}/remove`}>
            <Csrf ctx={ctx} />
            <button class="danger" type="submit">
              Remove endpoint
            </button>
            <a href={base}>Cancel</a>
          </form>,
        ],
        crumbs(scope, [{ label: 'Endpoint', href: base }, { label: 'Remove' }]),
      ),
    );
  });

  app.post('/w/:ws/p/:prj/webhooks/:hook/remove', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, hook } = request.params as Params;
    const scope = await endpointScope(deps, visitor, ws!, prj!, hook!);
    mustManage(scope);
    await deps.store.removeEndpoint(scope.endpoint.id);
    return reply.redirect(`${baseOf(scope)}?done=removed`, 303);
  });
}
