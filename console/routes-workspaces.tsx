/**
 * Workspaces, projects and members (docs/api.md#authentication, "Ownership"). A new workspace
 * starts on the Free plan with its creator as owner. Owners and admins create projects, set project
 * caps and manage members; only an owner gives or takes the owner role, and a workspace keeps one
 * owner.
 */
import { AccountsError, MEMBER_ROLES, type MemberRole } from '../accounts/index.js';
import type { FastifyRequest } from 'fastify';
import { Forbidden, NotFound, type ConsoleDeps, type Visitor } from './deps.js';
import { Csrf, Notice, formatCount, formatDate, renderPage } from './layout.js';
import { mustManage, workspaceScope } from './scope.js';
import { DailyChart, Meter, workspaceUsage } from './usage.js';

type Params = Record<string, string>;
type Body = Record<string, string | undefined>;

const NOTICES: Record<string, string> = {
  invited: 'Invitation sent: they can sign in with their e-mail address now.',
  role: 'Role changed.',
  removed: 'Member removed.',
};

export function registerWorkspaceRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  app.get('/', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const ctx = deps.page(request);
    const memberships = await deps.store.memberships(visitor.user.id);
    return deps.send(
      reply,
      renderPage(ctx, 'Workspaces', [
        memberships.length === 0 ? (
          <p>You are not in a workspace yet. Create one, or ask a workspace owner to invite you.</p>
        ) : (
          <section class="card" aria-label="Your workspaces">
            <ul>
              {memberships.map((m) => (
                <li>
                  <a href={`/w/${m.workspace.id}`}>{m.workspace.name}</a>{' '}
                  <span class="muted">({m.role})</span>
                </li>
              ))}
            </ul>
          </section>
        ),
        <section class="card">
          <h2>New workspace</h2>
          <p class="muted">A new workspace starts on the Free plan; you are its owner.</p>
          <form class="stack" method="post" action="/workspaces">
            <Csrf ctx={ctx} />
            <label>
              Name
              <input name="name" required maxLength={100} />
            </label>
            <div>
              <button type="submit">Create workspace</button>
            </div>
          </form>
        </section>,
      ]),
    );
  });

  app.post('/workspaces', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const name = ((request.body as Body).name ?? '').trim();
    if (name.length < 1 || name.length > 100) {
      return deps.error(request, reply, 400, 'A workspace name has 1 to 100 characters.');
    }
    const workspace = await deps.store.createWorkspace({ name });
    await deps.store.addMember(workspace.id, visitor.user.email, 'owner');
    return reply.redirect(`/w/${workspace.id}`, 303);
  });

  app.get('/w/:ws', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws } = request.params as Params;
    const scope = await workspaceScope(deps, visitor, ws!);
    const ctx = deps.page(request);
    const [projects, usage] = await Promise.all([
      deps.store.listProjects({ workspaceId: scope.workspace.id }),
      workspaceUsage(deps, scope.workspace),
    ]);
    const base = `/w/${scope.workspace.id}`;
    return deps.send(
      reply,
      renderPage(
        ctx,
        scope.workspace.name,
        [
          <p class="muted">
            Plan: {usage.plan.name === 'free' ? 'Free' : usage.plan.name} ·{' '}
            {formatCount(usage.plan.requestsPerMinute)} requests per minute · your role: {scope.role} ·{' '}
            <a href={`${base}/members`}>Members</a>
          </p>,
          <section class="card">
            <h2>Usage this month</h2>
            <Meter used={usage.used} limit={usage.plan.monthlyQuota} label="Workspace quota" />
            <DailyChart month={usage.month} daily={usage.daily} title="Workspace" />
          </section>,
          <section class="card">
            <h2>Projects</h2>
            {projects.length === 0 ? (
              <p>No projects yet.</p>
            ) : (
              <div class="table-wrap">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Project</th>
                      <th scope="col" class="num">
                        Used this month
                      </th>
                      <th scope="col" class="num">
                        Monthly cap
                      </th>
                      <th scope="col">Created</th>
                    </tr>
                  </thead>
                  <tbody>
                    {projects.map((p) => (
                      <tr>
                        <td>
                          <a href={`${base}/p/${p.id}`}>{p.name}</a>
                        </td>
                        <td class="num">{formatCount(usage.byProject.get(p.id) ?? 0)}</td>
                        <td class="num">{p.monthlyCap === null ? 'none' : formatCount(p.monthlyCap)}</td>
                        <td>{formatDate(p.createdAt)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {scope.manages && (
              <form class="stack" method="post" action={`${base}/projects`}>
                <h3>New project</h3>
                <Csrf ctx={ctx} />
                <label>
                  Name
                  <input name="name" required maxLength={100} />
                </label>
                <div>
                  <button type="submit">Create project</button>
                </div>
              </form>
            )}
          </section>,
        ],
        [{ label: 'Workspaces', href: '/' }, { label: scope.workspace.name }],
      ),
    );
  });

  app.post('/w/:ws/projects', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const scope = await workspaceScope(deps, visitor, (request.params as Params).ws!);
    mustManage(scope);
    const name = ((request.body as Body).name ?? '').trim();
    try {
      const project = await deps.store.createProject({ workspaceId: scope.workspace.id, name });
      return reply.redirect(`/w/${scope.workspace.id}/p/${project.id}`, 303);
    } catch (error) {
      if (error instanceof AccountsError) return deps.error(request, reply, 400, error.message);
      throw error;
    }
  });

  app.get('/w/:ws/members', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const scope = await workspaceScope(deps, visitor, (request.params as Params).ws!);
    const ctx = deps.page(request);
    const members = await deps.store.listMembers(scope.workspace.id);
    const base = `/w/${scope.workspace.id}/members`;
    const done = NOTICES[String((request.query as Record<string, unknown>).done)];
    const grantable = scope.role === 'owner' ? MEMBER_ROLES : MEMBER_ROLES.filter((r) => r !== 'owner');
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Members',
        [
          done && <Notice kind="ok">{done}</Notice>,
          <section class="card">
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">E-mail</th>
                    <th scope="col">Role</th>
                    <th scope="col">Since</th>
                    {scope.manages && <th scope="col">Change</th>}
                  </tr>
                </thead>
                <tbody>
                  {members.map((m) => (
                    <tr>
                      <td>{m.email}</td>
                      <td>{m.role}</td>
                      <td>{formatDate(m.createdAt)}</td>
                      {scope.manages && (
                        <td>
                          {(scope.role === 'owner' || m.role !== 'owner') && m.userId !== visitor.user.id ? (
                            <div class="actions">
                              <form class="actions" method="post" action={`${base}/${m.userId}/role`}>
                                <Csrf ctx={ctx} />
                                <select name="role" aria-label={`Role of ${m.email}`}>
                                  {grantable.map((r) => (
                                    <option value={r} selected={r === m.role}>
                                      {r}
                                    </option>
                                  ))}
                                </select>
                                <button class="secondary" type="submit">
                                  Save
                                </button>
                              </form>
                              <form class="inline" method="post" action={`${base}/${m.userId}/remove`}>
                                <Csrf ctx={ctx} />
                                <button class="secondary" type="submit" aria-label={`Remove ${m.email}`}>
                                  Remove
                                </button>
                              </form>
                            </div>
                          ) : (
                            <span class="muted">—</span>
                          )}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>,
          scope.manages && (
            <section class="card">
              <h2>Invite a member</h2>
              <form class="stack" method="post" action={base}>
                <Csrf ctx={ctx} />
                <label>
                  E-mail address
                  <input type="email" name="email" required maxLength={320} autocomplete="off" />
                </label>
                <label>
                  Role
                  <select name="role">
                    {grantable.map((r) => (
                      <option value={r} selected={r === 'member'}>
                        {r}
                      </option>
                    ))}
                  </select>
                  <span class="hint">Members see keys and usage; admins and owners also manage them.</span>
                </label>
                <div>
                  <button type="submit">Invite</button>
                </div>
              </form>
            </section>
          ),
        ],
        [
          { label: 'Workspaces', href: '/' },
          { label: scope.workspace.name, href: `/w/${scope.workspace.id}` },
          { label: 'Members' },
        ],
      ),
    );
  });

  const roleOf = (value: unknown): MemberRole | null =>
    MEMBER_ROLES.includes(value as MemberRole) ? (value as MemberRole) : null;

  app.post('/w/:ws/members', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const scope = await workspaceScope(deps, visitor, (request.params as Params).ws!);
    mustManage(scope);
    const body = request.body as Body;
    const role = roleOf(body.role);
    if (role === null) return deps.error(request, reply, 400, `Choose a role: ${MEMBER_ROLES.join(', ')}.`);
    if (role === 'owner' && scope.role !== 'owner')
      throw new Forbidden('Only an owner can make someone an owner.');
    const existing = (await deps.store.listMembers(scope.workspace.id)).find(
      (m) => m.email === (body.email ?? '').trim().toLowerCase(),
    );
    if (existing)
      return deps.error(
        request,
        reply,
        400,
        `${existing.email} is already a member: change their role instead.`,
      );
    try {
      const member = await deps.store.addMember(scope.workspace.id, body.email ?? '', role);
      await deps.mailer.send({
        to: member.email,
        subject: `You are invited to ${scope.workspace.name} on ipscope`,
        text: `${visitor.user.email} invited you to the workspace "${scope.workspace.name}" as ${role}.\n\nSign in with this address at ${deps.origin}/sign-in\n`,
      });
    } catch (error) {
      if (error instanceof AccountsError) return deps.error(request, reply, 400, error.message);
      throw error;
    }
    return reply.redirect(`/w/${scope.workspace.id}/members?done=invited`, 303);
  });

  /** The member named in the path, when the visitor may change them. */
  async function changeable(request: FastifyRequest, visitor: Visitor) {
    const { ws, user } = request.params as Params;
    const scope = await workspaceScope(deps, visitor, ws!);
    mustManage(scope);
    const members = await deps.store.listMembers(scope.workspace.id);
    const member = members.find((m) => m.userId === user);
    if (!member) throw new NotFound();
    if (member.userId === visitor.user.id)
      throw new Forbidden('Ask another owner or admin to change your own role.');
    if (member.role === 'owner' && scope.role !== 'owner')
      throw new Forbidden('Only an owner can change an owner.');
    return { scope, member, owners: members.filter((m) => m.role === 'owner').length };
  }

  app.post('/w/:ws/members/:user/role', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { scope, member, owners } = await changeable(request, visitor);
    const role = roleOf((request.body as Body).role);
    if (role === null) return deps.error(request, reply, 400, `Choose a role: ${MEMBER_ROLES.join(', ')}.`);
    if (role === 'owner' && scope.role !== 'owner')
      throw new Forbidden('Only an owner can make someone an owner.');
    if (member.role === 'owner' && role !== 'owner' && owners <= 1) {
      throw new Forbidden('A workspace keeps at least one owner.');
    }
    await deps.store.addMember(scope.workspace.id, member.email, role);
    return reply.redirect(`/w/${scope.workspace.id}/members?done=role`, 303);
  });

  app.post('/w/:ws/members/:user/remove', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { scope, member, owners } = await changeable(request, visitor);
    if (member.role === 'owner' && owners <= 1) throw new Forbidden('A workspace keeps at least one owner.');
    await deps.store.removeMember(scope.workspace.id, member.email);
    return reply.redirect(`/w/${scope.workspace.id}/members?done=removed`, 303);
  });
}
