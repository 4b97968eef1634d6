/**
 * Workspaces, projects and members (docs/api.md#authentication, "Ownership"). A new workspace
 * starts on the Free plan with its creator as owner. Owners and admins create projects, set project
 * caps and manage members; only an owner gives or takes the owner role, and a workspace keeps one
 * owner. Every form shows its problems in place, with its values kept; removing a member asks first.
 */
import { AccountsError, MEMBER_ROLES, type MemberRole } from '../accounts/index.js';
import type { FastifyRequest } from 'fastify';
import { Forbidden, NotFound, type ConsoleDeps, type Visitor } from './deps.js';
import { Field, ProblemSummary, SelectField, blankForm, type FormState } from './forms.js';
import { Csrf, Notice, formatCount, formatDate, renderPage } from './layout.js';
import { mustManage, workspaceScope, type WorkspaceScope } from './scope.js';
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

  async function homePage(request: FastifyRequest, visitor: Visitor, form: FormState) {
    const ctx = deps.page(request);
    const memberships = await deps.store.memberships(visitor.user.id);
    return renderPage(ctx, 'Workspaces', [
      memberships.length === 0 ? (
        <p class="empty">
          You are not in a workspace yet. Create one below, or ask a workspace owner to invite you.
        </p>
      ) : (
        <section class="card" aria-label="Your workspaces">
          <ul>
            {memberships.map((m) => (
              <li>
                <a href={`/w/${m.workspace.id}`}>{m.workspace.name}</a> <span class="muted">({m.role})</span>
              </li>
            ))}
          </ul>
        </section>
      ),
      <section class="card">
        <h2>New workspace</h2>
        <p class="muted">A new workspace starts on the Free plan; you are its owner.</p>
        <form class="stack" method="post" action="/workspaces" novalidate>
          <ProblemSummary problems={form.problems} />
          <Csrf ctx={ctx} />
          <Field label="Name" name="name" form={form} required maxLength={100} />
          <div>
            <button type="submit">Create workspace</button>
          </div>
        </form>
      </section>,
    ]);
  }

  app.get('/', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    return deps.send(reply, await homePage(request, visitor, blankForm()));
  });

  app.post('/workspaces', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const sent = (request.body as Body).name;
    const name = (sent ?? '').trim();
    if (name.length < 1 || name.length > 100) {
      const form = {
        values: { name: sent },
        problems: { name: 'A workspace name has 1 to 100 characters.' },
      };
      return deps.invalid(reply, await homePage(request, visitor, form));
    }
    const workspace = await deps.store.createWorkspace({ name });
    await deps.store.addMember(workspace.id, visitor.user.email, 'owner');
    return reply.redirect(`/w/${workspace.id}`, 303);
  });

  async function workspacePage(request: FastifyRequest, scope: WorkspaceScope, form: FormState) {
    const ctx = deps.page(request);
    const [projects, usage] = await Promise.all([
      deps.store.listProjects({ workspaceId: scope.workspace.id }),
      workspaceUsage(deps, scope.workspace),
    ]);
    const base = `/w/${scope.workspace.id}`;
    return renderPage(
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
            <p class="empty">
              No projects yet.{' '}
              {scope.manages
                ? 'A project holds API keys and can have a monthly cap of its own: create the first below.'
                : 'An owner or admin of the workspace can create one.'}
            </p>
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
            <form class="stack" method="post" action={`${base}/projects`} novalidate>
              <h3>New project</h3>
              <ProblemSummary problems={form.problems} />
              <Csrf ctx={ctx} />
              <Field label="Name" name="name" form={form} required maxLength={100} />
              <div>
                <button type="submit">Create project</button>
              </div>
            </form>
          )}
        </section>,
      ],
      [{ label: 'Workspaces', href: '/' }, { label: scope.workspace.name }],
    );
  }

  app.get('/w/:ws', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const scope = await workspaceScope(deps, visitor, (request.params as Params).ws!);
    return deps.send(reply, await workspacePage(request, scope, blankForm()));
  });

  app.post('/w/:ws/projects', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const scope = await workspaceScope(deps, visitor, (request.params as Params).ws!);
    mustManage(scope);
    const sent = (request.body as Body).name;
    const name = (sent ?? '').trim();
    let problem: string;
    if (name.length < 1 || name.length > 100) problem = 'A project name has 1 to 100 characters.';
    else {
      const projects = await deps.store.listProjects({ workspaceId: scope.workspace.id });
      if (projects.some((p) => p.name === name)) problem = `There is a project named "${name}" already.`;
      else {
        try {
          const project = await deps.store.createProject({ workspaceId: scope.workspace.id, name });
          return reply.redirect(`/w/${scope.workspace.id}/p/${project.id}`, 303);
        } catch (error) {
          if (!(error instanceof AccountsError)) throw error;
          problem = error.message;
        }
      }
    }
    const form = { values: { name: sent }, problems: { name: problem } };
    return deps.invalid(reply, await workspacePage(request, scope, form));
  });

  async function membersPage(
    request: FastifyRequest,
    visitor: Visitor,
    scope: WorkspaceScope,
    invite: FormState,
    problem?: string,
  ) {
    const ctx = deps.page(request);
    const members = await deps.store.listMembers(scope.workspace.id);
    const base = `/w/${scope.workspace.id}/members`;
    const done = NOTICES[String((request.query as Record<string, unknown>).done)];
    const grantable = scope.role === 'owner' ? MEMBER_ROLES : MEMBER_ROLES.filter((r) => r !== 'owner');
    return renderPage(
      ctx,
      'Members',
      [
        done && problem === undefined && <Notice kind="ok">{done}</Notice>,
        problem !== undefined && <Notice kind="error">{problem}</Notice>,
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
                            <a href={`${base}/${m.userId}/remove`} aria-label={`Remove ${m.email}`}>
                              Remove…
                            </a>
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
            <form class="stack" method="post" action={base} novalidate>
              <ProblemSummary problems={invite.problems} />
              <Csrf ctx={ctx} />
              <Field
                label="E-mail address"
                name="email"
                form={invite}
                type="email"
                required
                maxLength={320}
                autocomplete="off"
              />
              <SelectField
                label="Role"
                name="role"
                form={invite}
                options={grantable}
                hint="Members see keys and usage; admins and owners also manage them."
              />
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
    );
  }

  app.get('/w/:ws/members', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const scope = await workspaceScope(deps, visitor, (request.params as Params).ws!);
    return deps.send(reply, await membersPage(request, visitor, scope, blankForm({ role: 'member' })));
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
    if (role === 'owner' && scope.role !== 'owner')
      throw new Forbidden('Only an owner can make someone an owner.');
    const email = (body.email ?? '').trim().toLowerCase();
    const form: FormState = { values: { email: body.email, role: body.role }, problems: {} };
    if (role === null) form.problems.role = `Choose a role: ${MEMBER_ROLES.join(', ')}.`;
    const existing = (await deps.store.listMembers(scope.workspace.id)).find((m) => m.email === email);
    if (existing)
      form.problems.email = `${existing.email} is already a member: change their role above instead.`;
    else if (!/^[^\s@]{1,64}@[^\s@]{1,255}$/.test(email))
      form.problems.email = 'Enter an e-mail address like name@example.com.';
    if (role !== null && form.problems.email === undefined) {
      try {
        const member = await deps.store.addMember(scope.workspace.id, email, role);
        await deps.mailer.send({
          to: member.email,
          subject: `You are invited to ${scope.workspace.name} on ipscope`,
          text: `${visitor.user.email} invited you to the workspace "${scope.workspace.name}" as ${role}.\n\nSign in with this address at ${deps.origin}/sign-in\n`,
        });
        return reply.redirect(`/w/${scope.workspace.id}/members?done=invited`, 303);
      } catch (error) {
        if (!(error instanceof AccountsError)) throw error;
        form.problems.email = error.message;
      }
    }
    return deps.invalid(reply, await membersPage(request, visitor, scope, form));
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
    if (role === 'owner' && scope.role !== 'owner')
      throw new Forbidden('Only an owner can make someone an owner.');
    let problem: string | undefined;
    if (role === null) problem = `Choose a role: ${MEMBER_ROLES.join(', ')}.`;
    else if (member.role === 'owner' && role !== 'owner' && owners <= 1)
      problem = `${member.email} is the only owner: make someone else an owner first.`;
    if (problem !== undefined || role === null) {
      return deps.invalid(
        reply,
        await membersPage(request, visitor, scope, blankForm({ role: 'member' }), problem),
      );
    }
    await deps.store.addMember(scope.workspace.id, member.email, role);
    return reply.redirect(`/w/${scope.workspace.id}/members?done=role`, 303);
  });

  app.get('/w/:ws/members/:user/remove', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { scope, member } = await changeable(request, visitor);
    const ctx = deps.page(request);
    const base = `/w/${scope.workspace.id}/members`;
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Remove this member?',
        [
          <p>
            <strong>{member.email}</strong> ({member.role}) loses access to {scope.workspace.name} at once:
            its projects, keys and usage. Their keys keep working until revoked. You can invite them again.
          </p>,
          <form class="actions" method="post" action={`${base}/${member.userId}/remove`}>
            <Csrf ctx={ctx} />
            <button class="danger" type="submit">
              Remove {member.email}
            </button>
            <a href={base}>Cancel</a>
          </form>,
        ],
        [
          { label: 'Workspaces', href: '/' },
          { label: scope.workspace.name, href: `/w/${scope.workspace.id}` },
          { label: 'Members', href: base },
          { label: 'Remove' },
        ],
      ),
    );
  });

  app.post('/w/:ws/members/:user/remove', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { scope, member, owners } = await changeable(request, visitor);
    if (member.role === 'owner' && owners <= 1) {
      const problem = `${member.email} is the only owner: make someone else an owner first.`;
      return deps.invalid(
        reply,
        await membersPage(request, visitor, scope, blankForm({ role: 'member' }), problem),
      );
    }
    await deps.store.removeMember(scope.workspace.id, member.email);
    return reply.redirect(`/w/${scope.workspace.id}/members?done=removed`, 303);
  });
}
