/**
 * The playground page: pick an operation, fill in its parameters (a form made from the operation
 * table, shared/operations.ts), run it as the project's Playground key (playground.ts) and see the
 * status, the limit headers and the pretty-printed JSON, with copy-JSON and copy-as-curl buttons.
 * Owners and admins only. Switching the operation needs no page load where scripts run (every
 * operation's form is on the page, console.js shows the chosen one). A run is a POST that redirects
 * to the page with the run's inputs and a nonce in the address; the answer travels in the flash
 * cookie (flash.ts), so a reload shows it again without running again.
 */
import { AccountsError } from '../accounts/index.js';
import { OPERATIONS, type Operation } from '../shared/operations.js';
import { PATH_PARAMETERS, QUERY_PARAMETERS } from '../shared/parameters.js';
import type { ConsoleDeps } from './deps.js';
import { FLASH_MAX_CHARS, readFlash, seal, setFlash } from './flash.js';
import { Csrf, Notice, renderPage, type PageContext } from './layout.js';
import { randomToken } from './security.js';
import { PLAYGROUND_KEY_DAYS, playgroundKey, runPlayground, type PlaygroundResult } from './playground.js';
import { projectCrumbs } from './routes-keys.js';
import { mustManage, projectScope } from './scope.js';

type Params = Record<string, string>;
type Body = Record<string, string | undefined>;

const opById = (id: unknown): Operation => OPERATIONS.find((op) => op.id === id) ?? OPERATIONS[0]!;

function OperationForm({
  ctx,
  op,
  action,
  values,
}: {
  ctx: PageContext;
  op: Operation;
  action: string;
  values: Body;
}) {
  const path = op.pathParameter && PATH_PARAMETERS[op.pathParameter];
  return (
    <form class="stack" method="post" action={action}>
      <Csrf ctx={ctx} />
      <input type="hidden" name="op" value={op.id} />
      <p class="mono">GET {op.path}</p>
      {op.pathParameter && path && (
        <label>
          {op.pathParameter}
          <input
            name={op.pathParameter}
            required
            maxLength={2048}
            value={values[op.pathParameter] ?? path.examples?.[0] ?? ''}
          />
          <span class="hint">{path.description}</span>
        </label>
      )}
      {op.query.map((name) => {
        const p = QUERY_PARAMETERS[name];
        if (p.kind === 'boolean') {
          return (
            <label class="check">
              <span>
                <input type="checkbox" name={name} value="true" checked={values[name] === 'true'} /> {name}
              </span>
              <span class="hint">{p.description}</span>
            </label>
          );
        }
        return (
          <label>
            {name} (optional)
            <input
              name={name}
              inputMode={p.kind === 'integer' ? 'numeric' : undefined}
              maxLength={p.kind === 'integer' ? 10 : 1024}
              value={values[name] ?? ''}
            />
            <span class="hint">{p.description}</span>
          </label>
        );
      })}
      <div>
        <button type="submit">Run</button>
      </div>
    </form>
  );
}

/** A run as the flash cookie carries it to the page the run redirects to. */
interface Run extends PlaygroundResult {
  /** The run's nonce, in the page's address: a reload shows the same run, without running again. */
  nonce: string;
  /** The body was cut to fit the cookie (a very large answer). */
  truncated: boolean;
}

type Outcome = PlaygroundResult & { problem?: string };

/** The request a run made, as a curl command (the key left to an environment variable). */
function curlOf(apiUrl: string, op: Operation, values: Body): string {
  let urlPath = op.path;
  if (op.pathParameter) {
    urlPath = urlPath.replace(`{${op.pathParameter}}`, encodeURIComponent(values[op.pathParameter] ?? ''));
  }
  const query = new URLSearchParams();
  for (const name of op.query) {
    const value = values[name];
    if (value !== undefined && value !== '') query.set(name, value);
  }
  const search = query.size > 0 ? `?${query.toString()}` : '';
  return `curl -H "Authorization: Bearer $IPSCOPE_KEY" '${apiUrl}${urlPath}${search}'`;
}

function Result({ run, curl }: { run: Run; curl: string }) {
  return (
    <section class="card" aria-labelledby="result-title" data-run-result>
      <h2 id="result-title">
        Response: <span class="mono">{run.status}</span>
      </h2>
      {run.headers.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="muted">Limit headers</caption>
            <tbody>
              {run.headers.map(([name, value]) => (
                <tr>
                  <th scope="row" class="mono">
                    {name}
                  </th>
                  <td class="mono">{value}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <div class="actions">
        <button type="button" data-copy="result-json">
          Copy JSON
        </button>
        <button type="button" class="secondary" data-copy="curl">
          Copy as curl
        </button>
      </div>
      {run.truncated && (
        <Notice kind="warn">
          The answer is too large to keep for this page: it is cut short. Run it with curl for all of it.
        </Notice>
      )}
      <pre tabIndex={0} aria-label="Response body">
        <code id="result-json">{run.json}</code>
      </pre>
      <h3>The same request with curl</h3>
      <pre tabIndex={0} aria-label="curl command">
        <code id="curl">{curl}</code>
      </pre>
    </section>
  );
}

/** The run sealed for the flash cookie, its body cut until it fits. */
function sealRun(token: string, purpose: string, result: Outcome): { nonce: string; sealed: string } {
  const nonce = randomToken(9);
  let run: Run & Outcome = { ...result, nonce, truncated: false };
  let sealed = seal(token, purpose, run);
  while (sealed.length > FLASH_MAX_CHARS) {
    run = { ...run, json: run.json.slice(0, Math.floor(run.json.length * 0.6)), truncated: true };
    sealed = seal(token, purpose, run);
  }
  return { nonce, sealed };
}

export function registerPlaygroundRoutes(deps: ConsoleDeps): void {
  const { app } = deps;
  const purpose = (projectId: string) => `playground:${projectId}`;

  /** The page: an operation's form (all of them, one shown), and the run the address names. */
  app.get('/w/:ws/p/:prj/playground', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const values = request.query as Body;
    const op = opById(values.op);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}/playground`;
    const flash = readFlash<Run & Outcome>(request, visitor.token, purpose(scope.project.id));
    const run = flash !== null && flash.nonce === values.run ? flash : null;
    const ctx = deps.page(request);
    return deps.send(
      reply,
      renderPage(
        ctx,
        'Playground',
        [
          <p class="muted">
            Runs count like any request. They use the project's key labelled “Playground”, which the console
            creates on the first run, keeps to itself, and replaces after {PLAYGROUND_KEY_DAYS} days.
          </p>,
          <section class="card">
            <form class="actions" method="get" action={base}>
              <label>
                Operation
                <select name="op" data-op-switch>
                  {OPERATIONS.map((o) => (
                    <option value={o.id} selected={o.id === op.id}>
                      {`${o.id}: ${o.title}`}
                    </option>
                  ))}
                </select>
              </label>
              <button class="secondary" type="submit" data-op-choose>
                Choose
              </button>
            </form>
            {OPERATIONS.map((o) => (
              <div class="op" data-op={o.id} hidden={o.id !== op.id}>
                <h2>{o.title}</h2>
                <p>{o.summary}</p>
                <OperationForm ctx={ctx} op={o} action={base} values={o.id === op.id ? values : {}} />
              </div>
            ))}
          </section>,
          run?.problem !== undefined && <Notice kind="error">{run.problem}</Notice>,
          run && run.problem === undefined && (
            <Result run={run} curl={curlOf(deps.apiUrl ?? deps.origin, op, values)} />
          ),
        ],
        projectCrumbs(scope.workspace, scope.project, 'Playground'),
      ),
    );
  });

  /** A run: through the call envelope, then to the page (post/redirect/get: a reload does not run again). */
  app.post('/w/:ws/p/:prj/playground', async (request, reply) => {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const body = request.body as Body;
    const op = opById(body.op);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}/playground`;
    const kept = new URLSearchParams({ op: op.id });
    const query: Record<string, string> = {};
    if (op.pathParameter) kept.set(op.pathParameter, body[op.pathParameter] ?? '');
    for (const name of op.query) {
      const value = body[name];
      if (value === undefined || value === '') continue;
      query[name] = value;
      kept.set(name, value);
    }
    let result: Outcome;
    try {
      const key = await playgroundKey(deps.store, scope.project);
      result = await runPlayground(deps.envelope, op, key, scope.workspace, scope.project, {
        path: op.pathParameter ? (body[op.pathParameter] ?? '') : undefined,
        query,
      });
    } catch (error) {
      if (!(error instanceof AccountsError)) throw error;
      const problem = `The playground needs a key of its own: ${error.message}`;
      result = { status: 0, headers: [], json: '', problem };
    }
    const { nonce, sealed } = sealRun(visitor.token, purpose(scope.project.id), result);
    setFlash(reply, sealed);
    kept.set('run', nonce);
    return reply.redirect(`${base}?${kept.toString()}`, 303);
  });
}
