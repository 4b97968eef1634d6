/**
 * Test keys for the server tests: `createTestKey(file or store, options)` finds or creates the
 * workspace and project by name and creates a key in them, returning the plaintext key.
 */
import { openAccountsStore, type AccountsStore, type KeyRecord } from '../../accounts/index.js';

export interface TestKeyOptions {
  /** Workspace name (default "test"); created when missing. */
  workspace?: string;
  /** Project name (default "test"); created when missing. */
  project?: string;
  label?: string;
  expiresAt?: Date | null;
  /** For a new workspace: its plan (default "free"). */
  plan?: string;
  /** For a new project: its monthly cap (default none). */
  monthlyCap?: number | null;
}

export interface TestKey {
  key: string;
  keyId: string;
  projectId: string;
  workspaceId: string;
  record: KeyRecord;
}

export async function createTestKey(
  storeOrFile: AccountsStore | string,
  options: TestKeyOptions = {},
): Promise<TestKey> {
  const store = typeof storeOrFile === 'string' ? openAccountsStore(storeOrFile) : storeOrFile;
  try {
    const workspaceName = options.workspace ?? 'test';
    const workspace =
      (await store.findWorkspace(workspaceName)) ??
      (await store.createWorkspace({ name: workspaceName, plan: options.plan }));
    const projectName = options.project ?? 'test';
    const project =
      (await store.findProject(projectName, workspace.id)) ??
      (await store.createProject({
        workspaceId: workspace.id,
        name: projectName,
        monthlyCap: options.monthlyCap ?? null,
      }));
    const { key, record } = await store.createKey({
      projectId: project.id,
      label: options.label ?? 'test',
      expiresAt: options.expiresAt ?? null,
    });
    return { key, keyId: record.id, projectId: project.id, workspaceId: workspace.id, record };
  } finally {
    if (typeof storeOrFile === 'string') await store.close();
  }
}
