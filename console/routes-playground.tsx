/**
 * The playground page: pick an operation, fill in its parameters (a form made from the operation
 * table, shared/operations.ts), run it as the project's Playground key (playground.ts) and see the
 * status, the limit headers and the pretty-printed JSON. Owners and admins only.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AccountsError } from '../accounts/index.js';
import { OPERATIONS, type Operation } from '../shared/operations.js';
import { PATH_PARAMETERS, QUERY_PARAMETERS } from '../shared/parameters.js';
import type { ConsoleDeps } from './deps.js';
import { Csrf, Notice, renderPage, type PageContext } from './layout.js';
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

function Result({ result }: { result: PlaygroundResult }) {
  return (
    <section class="card" aria-labelledby="result-title">
      <h2 id="result-title">
        Response: <span class="mono">{result.status}</span>
      </h2>
      {result.headers.length > 0 && (
        <div class="table-wrap">
          <table>
            <caption class="muted">Limit headers</caption>
            <tbody>
              {result.headers.map(([name, value]) => (
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
      <pre tabIndex={0} aria-label="Response body">
        <code>{result.json}</code>
      </pre>
    </section>
  );
}

export function registerPlaygroundRoutes(deps: ConsoleDeps): void {
  const { app } = deps;

  async function show(request: FastifyRequest, reply: FastifyReply) {
    const visitor = deps.visitor(request, reply);
    if (!visitor) return reply;
    const { ws, prj } = request.params as Params;
    const scope = await projectScope(deps, visitor, ws!, prj!);
    mustManage(scope);
    const body = (request.method === 'POST' ? request.body : request.query) as Body;
    const op = opById(body.op);
    const base = `/w/${scope.workspace.id}/p/${scope.project.id}/playground`;
    let result: PlaygroundResult | null = null;
    let problem: string | null = null;
    if (request.method === 'POST') {
      try {
        const key = await playgroundKey(deps.store, scope.project);
        const query: Record<string, string> = {};
        for (const name of op.query) {
          const value = body[name];
          if (value !== undefined && value !== '') query[name] = value;
        }
        result = await runPlayground(deps.envelope, op, key, scope.workspace, scope.project, {
          path: op.pathParameter ? (body[op.pathParameter] ?? '') : undefined,
          query,
        });
      } catch (error) {
        if (!(error instanceof AccountsError)) throw error;
        problem = `The playground needs a key of its own: ${error.message}`;
      }
    }
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
                <select name="op">
                  {OPERATIONS.map((o) => (
                    <option value={o.id} selected={o.id === op.id}>
                      {`${o.id}: ${o.title}`}
                    </option>
                  ))}
                </select>
              </label>
              <button class="secondary" type="submit">
                Choose
              </button>
            </form>
            <h2>{op.title}</h2>
            <p>{op.summary}</p>
            <OperationForm ctx={ctx} op={op} action={base} values={request.method === 'POST' ? body : {}} />
          </section>,
          problem && <Notice kind="error">{problem}</Notice>,
          result && <Result result={result} />,
        ],
        projectCrumbs(scope.workspace, scope.project, 'Playground'),
      ),
    );
  }

  app.get('/w/:ws/p/:prj/playground', show);
  app.post('/w/:ws/p/:prj/playground', show);
}
