/**
 * The playground's key and runs (docs/api.md#authentication, "Playground key"). The console creates
 * a key labelled `Playground` in the project on the first run; it counts toward the workspace's 25
 * active keys, expires after 90 days and, once expired (or revoked), is replaced on the next run.
 * Its plaintext is dropped at creation and never reaches the browser: a run acts as the key's
 * principal (what the key check would return for it) and goes through the API's call envelope, so
 * it is metered, counted and answered exactly like a request with the key.
 */
import {
  effectivePlan,
  keyStatus,
  type AccountsStore,
  type KeyPrincipal,
  type KeyRecord,
  type Project,
  type Workspace,
} from '../accounts/index.js';
import type { CallResult, Envelope } from '../server/call/envelope.js';
import { jsonText } from '../server/encoding/json.js';
import type { Operation } from '../shared/operations.js';

export const PLAYGROUND_LABEL = 'Playground';
export const PLAYGROUND_KEY_DAYS = 90;

/** A run's client: the console vouches for the principal, so no key is refused and no address counted. */
const CONSOLE = { clientAddress: () => undefined };

/** The project's active Playground key, created when there is none. */
export async function playgroundKey(
  store: AccountsStore,
  project: Project,
  now = new Date(),
): Promise<KeyRecord> {
  const keys = await store.listKeys({ projectId: project.id });
  const active = keys.find((k) => k.label === PLAYGROUND_LABEL && keyStatus(k, now) === 'active');
  if (active) return active;
  const created = await store.createKey(
    {
      projectId: project.id,
      label: PLAYGROUND_LABEL,
      expiresAt: new Date(now.getTime() + PLAYGROUND_KEY_DAYS * 86_400_000),
    },
    now,
  );
  return created.record;
}

export interface PlaygroundResult {
  status: number;
  /** The limit headers (and Retry-After) the API would send. */
  headers: [string, string][];
  /** The body, pretty-printed. */
  json: string;
}

/** Runs one operation as the Playground key, through the call envelope. */
export async function runPlayground(
  envelope: Envelope,
  op: Operation,
  key: KeyRecord,
  workspace: Workspace,
  project: Project,
  args: { path: string | undefined; query: Record<string, string> },
): Promise<PlaygroundResult> {
  const principal: KeyPrincipal = {
    keyId: key.id,
    projectId: project.id,
    workspaceId: workspace.id,
    plan: effectivePlan(workspace),
    projectMonthlyCap: project.monthlyCap,
  };
  // The console vouches for the principal: its key's plaintext is never kept (see above).
  const result = await new Promise<CallResult>((resolve) =>
    envelope.call(
      {
        op,
        credential: { principal },
        client: CONSOLE,
        args: { from: 'rest', path: args.path, query: args.query },
      },
      { result: resolve },
    ),
  );
  const text = result.answer !== null ? jsonText(result.answer.json) : JSON.stringify(result.refusal!.body);
  return {
    status: result.status,
    headers: Object.entries(result.headers).sort(([a], [b]) => a.localeCompare(b)),
    json: JSON.stringify(JSON.parse(text), null, 2),
  };
}
