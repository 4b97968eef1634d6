/**
 * A project's watchlist (docs/decisions/0034-watchlists-and-webhooks.md): its entries (domains, IP
 * addresses, CIDR prefixes, AS numbers) with the plan's limit, one entry's form and a bulk paste
 * parsed as the admin CLI's `watch add --file` (server/watch/subjects.ts: one per line, `#`
 * comments; all or nothing, each bad line named), and removal after a confirmation. Every member
 * sees the list; owners and admins add and remove. The limit is the store's (checked in the
 * transaction that adds), shown before a form is filled.
 */
import type { FastifyRequest } from 'fastify';
import { AccountsError, effectivePlan, type Project, type Workspace } from '../accounts/index.js';
import { WATCH_KINDS, type WatchEntry } from '../accounts/watch-types.js';
import { parseWatchList, parseWatchSubject } from '../server/watch/subjects.js';
import type { ConsoleDeps } from './deps.js';
import { Field, ProblemSummary, TextAreaField, blankForm, type FormState } from './forms.js';
import { Csrf, Notice, formatCount, formatDate, renderPage } from './layout.js';
import { projectCrumbs } from './routes-keys.js';
import { entryScope, mustManage, projectScope, type WorkspaceScope } from './scope.js';

type Params = Record<string, string>;
type Body = Record<string, string | undefined>;
type Scope = WorkspaceScope & { project: Project };

/** How the console writes an entry's subject: AS numbers as `AS13335`. */
export const subjectText = (entry: Pick<WatchEntry, 'kind' | 'subject'>) =>
  entry.kind === 'asn' ? `AS${entry.subject}` : entry.subject;

const KIND_NAMES: Record<WatchEntry['kind'], string> = {
  domain: 'domain',
  ip: 'IP address',
  prefix: 'CIDR prefix',
  asn: 'AS number',
};

const planLabel = (workspace: Workspace) => {
  const name = effectivePlan(workspace);
  return name === 'free' ? 'Free' : name;
};

const entries = (n: number) => (n === 1 ? '1 entry' : `${formatCount(n)} entries`);

/** `3 of 100 watch entries`, warning from 90% of the limit. */
function WatchCount({ have, limit, plan }: { have: number; limit: number; plan: string }) {
  const level = have >= limit ? 'full' : have >= limit * 0.9 ? 'near' : '';
  return (
    <p class={level ? 'key-count warn' : 'key-count'} id="watch-count">
      <strong>
        {formatCount(have)} of {formatCount(limit)}
      </strong>{' '}
      watch entries in this project (plan {plan})
      {level === 'full' && ': the most the plan allows. Remove an entry before adding another.'}
      {level === 'near' && `: ${formatCount(limit - have)} more can be added.`}
      {level === '' && '.'}
    </p>
  );
}

/** Oldest first; entries added together (one paste) by kind, then subject. */
const oldestFirst = (list: readonly WatchEntry[]) =>
  [...list].sort(
    (a, b) =>
      a.createdAt.getTime() - b.createdAt.getTime() ||
      WATCH_KINDS.indexOf(a.kind) - WATCH_KINDS.indexOf(b.kind) ||
      a.subject.localeCompare(b.subject),
  );

function doneNotice(query: Record<string, unknown>): string | undefined {
  const count = (v: unknown) => (typeof v === 'string' && /^\d{1,7}$/.test(v) ? Number(v) : null);
  if (query.done === 'removed') return 'The entry is removed: it gets no more events.';
  if (query.done === 'already-removed') return 'The entry had been removed already.';
  if (query.done !== 'added') return undefined;
  const added = count(query.added);
  const existing = count(query.existing) ?? 0;
  if (added === null) return undefined;
  if (added === 0) return 'Nothing added: every entry was watched already.';
  return `Added ${entries(added)}${existing > 0 ? `; ${entries(existing)} ${existing === 1 ? 'was' : 'were'} watched already` : ''}. Events come with the next data release.`;
}

export function registerWatchRoutes(deps: ConsoleDeps): void {
  const { app } = deps;
  const baseOf = (scope: Scope) => `/w/${scope.workspace.id}/p/${scope.project.id}`;

  async function watchPage(request: FastifyRequest, scope: Scope, one: FormState, bulk: FormState) {
    const ctx = deps.page(request);
    const base = baseOf(scope);
    const [stored, limit] = await Promise.all([
      deps.store.listWatchEntries(scope.project.id),
      deps.store.watchLimit(scope.project.id, deps.watch.freeLimit),
    ]);
    const list = oldestFirst(stored);
    const done = doneNotice(request.query as Record<string, unknown>);
    const full = list.length >= limit;
    return renderPage(
      ctx,
      'Watchlist',
      [
        done && <Notice kind="ok">{done}</Notice>,
        <p class="muted">
          The domains, IP addresses, CIDR prefixes and AS numbers this project watches: each new data release
          is compared with the one before, and what changed for them becomes an event of the change feed (
          <code>GET /v1/changes</code>) and of the project's <a href={`${base}/webhooks`}>webhooks</a>.
        </p>,
        <WatchCount have={list.length} limit={limit} plan={planLabel(scope.workspace)} />,
        <section class="card">
          <h2>Entries</h2>
          {list.length === 0 ? (
            <p class="empty">
              Nothing watched yet.{' '}
              {scope.manages ? 'Add an entry below.' : 'An owner or admin of the workspace can add entries.'}
            </p>
          ) : (
            <table class="cards" id="watch-entries">
              <caption class="muted">Oldest first; entries added together by kind, then subject</caption>
              <thead>
                <tr>
                  <th scope="col">Kind</th>
                  <th scope="col">Subject</th>
                  <th scope="col">Added</th>
                  {scope.manages && <th scope="col">Action</th>}
                </tr>
              </thead>
              <tbody>
                {list.map((e) => (
                  <tr>
                    <td data-label="Kind">{KIND_NAMES[e.kind]}</td>
                    <td data-label="Subject">
                      <span class="mono break">{subjectText(e)}</span>
                    </td>
                    <td data-label="Added">
                      <span class="date">{formatDate(e.createdAt)}</span>
                    </td>
                    {scope.manages && (
                      <td data-label="Action">
                        <a href={`${base}/watch/${e.id}/remove`} aria-label={`Remove ${subjectText(e)}`}>
                          Remove
                        </a>
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>,
        scope.manages && (
          <section class="card">
            <h2>Add entries</h2>
            {full ? (
              <>
                <ProblemSummary problems={{ ...one.problems, ...bulk.problems }} />
                <p>Remove an entry first: the project watches as many as its plan allows.</p>
              </>
            ) : (
              <>
                <form class="stack" method="post" action={`${base}/watch`} novalidate>
                  <ProblemSummary problems={one.problems} />
                  <Csrf ctx={ctx} />
                  <Field
                    label="Entry"
                    name="subject"
                    form={one}
                    required
                    maxLength={300}
                    hint="A domain (shop.example), an IP address (192.0.2.1), a CIDR prefix (192.0.2.0/24) or an AS number (AS13335)."
                  />
                  <div>
                    <button type="submit">Add entry</button>
                  </div>
                </form>
                <form class="stack" method="post" action={`${base}/watch/bulk`} novalidate>
                  <h3>Paste a list</h3>
                  <ProblemSummary problems={bulk.problems} />
                  <Csrf ctx={ctx} />
                  <TextAreaField
                    label="Entries, one per line"
                    name="lines"
                    form={bulk}
                    rows={8}
                    maxLength={60_000}
                    hint="# starts a comment; blank lines are skipped. Nothing is added unless every line is an entry."
                  />
                  <div>
                    <button type="submit">Add all</button>
                  </div>
                </form>
              </>
            )}
          </section>
        ),
      ],
      projectCrumbs(scope.workspace, scope.project, 'Watchlist'),
    );
  }

  /**
   * Adds parsed entries, or shows the form again with the plan's limit said in full: the store
   * checks it in the transaction that adds.
   */
  async function add(
    request: FastifyRequest,
    scope: Scope,
    parsed: ReadonlyArray<{ kind: WatchEntry['kind']; subject: string }>,
    form: FormState,
  ): Promise<{ added: number; existing: number } | FormState> {
    try {
      const result = await deps.store.addWatchEntries(scope.project.id, parsed, deps.watch.freeLimit);
      return { added: result.added.length, existing: result.existing };
    } catch (error) {
      if (!(error instanceof AccountsError) || error.code !== 'watch_limit_reached') throw error;
      const [list, limit] = await Promise.all([
        deps.store.listWatchEntries(scope.project.id),
        deps.store.watchLimit(scope.project.id, deps.watch.freeLimit),
      ]);
      const known = new Set(list.map((e) => `${e.kind} ${e.subject}`));
      const fresh = new Set(parsed.map((e) => `${e.kind} ${e.subject}`).filter((k) => !known.has(k)));
      return {
        values: form.values,
        problems: {
          form: `Nothing was added: the project watches ${entries(list.length)} of at most ${formatCount(limit)} (plan ${planLabel(scope.workspace)}), and ${entries(fresh.size)} more would pass the limit. Remove entries first, or add fewer.`,
        },
      };
    }
  }

  app.get('/w/:ws/p/:prj/watch', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    return deps.send(reply, await watchPage(request, scope, blankForm(), blankForm()));
  });

  app.post('/w/:ws/p/:prj/watch', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const sent = (request.body as Body).subject ?? '';
    const form: FormState = { values: { subject: sent }, problems: {} };
    const parsed = parseWatchSubject(sent);
    if (sent.trim() === '')
      form.problems.subject = 'Type a domain, an IP address, a CIDR prefix or an AS number.';
    else if (!parsed.ok) form.problems.subject = parsed.reason;
    const result = parsed.ok && sent.trim() !== '' ? await add(request, scope, [parsed], form) : form;
    if ('problems' in result)
      return deps.invalid(reply, await watchPage(request, scope, result, blankForm()));
    return reply.redirect(
      `${baseOf(scope)}/watch?done=added&added=${result.added}&existing=${result.existing}`,
      303,
    );
  });

  app.post('/w/:ws/p/:prj/watch/bulk', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const sent = (request.body as Body).lines ?? '';
    const form: FormState = { values: { lines: sent }, problems: {} };
    const list = parseWatchList(sent);
    if (!list.ok) {
      const lines = list.problems.length;
      form.problems.form = `Nothing was added: ${lines === 1 ? 'one line is not an entry' : `${lines} lines are not entries`}.`;
      form.problems.lines = list.problems.map((p) => `Line ${p.line}: ${p.reason}`).join('\n');
    } else if (list.entries.length === 0) {
      form.problems.lines = 'Paste at least one entry, one per line.';
    }
    const result = list.ok && list.entries.length > 0 ? await add(request, scope, list.entries, form) : form;
    if ('problems' in result)
      return deps.invalid(reply, await watchPage(request, scope, blankForm(), result));
    return reply.redirect(
      `${baseOf(scope)}/watch?done=added&added=${result.added}&existing=${result.existing}`,
      303,
    );
  });

  app.get('/w/:ws/p/:prj/watch/:entry/remove', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, entry } = request.params as Params;
    const scope = await entryScope(deps, visitor, ws!, prj!, entry!);
    mustManage(scope);
    const ctx = deps.page(request);
    const base = baseOf(scope);
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Remove this entry?',
        [
          <p>
            The project stops watching the {KIND_NAMES[scope.entry.kind]}{' '}
            <strong class="mono break">{subjectText(scope.entry)}</strong>: the next data releases make no
            events for it. Events it had are kept in the change feed.
          </p>,
          <form class="actions" method="post" action={`${base}/watch/${scope.entry.id}/remove`}>
            <Csrf ctx={ctx} />
            <button class="danger" type="submit">
              Remove entry
            </button>
            <a href={`${base}/watch`}>Cancel</a>
          </form>,
        ],
        projectCrumbs(scope.workspace, scope.project, 'Remove entry'),
      ),
    );
  });

  app.post('/w/:ws/p/:prj/watch/:entry/remove', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj, entry } = request.params as Params;
    const scope = await entryScope(deps, visitor, ws!, prj!, entry!);
    mustManage(scope);
    let done = 'removed';
    try {
      await deps.store.removeWatchEntry(scope.project.id, scope.entry.id);
    } catch (error) {
      if (!(error instanceof AccountsError) || error.code !== 'not_found') throw error;
      done = 'already-removed';
    }
    return reply.redirect(`${baseOf(scope)}/watch?done=${done}`, 303);
  });
}
