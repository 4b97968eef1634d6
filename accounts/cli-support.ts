/** What the admin commands of accounts/cli.ts share: output, argument parsers, lookups by name. */
import { InvalidArgumentError, type Command } from 'commander';
import { loadSettings } from '../shared/config.js';
import { parseIsoToEpoch } from '../shared/time.js';
import { openConfiguredAccountsStore } from './open.js';
import type { Project, Workspace } from './records.js';
import { AccountsError, type AccountsStore } from './store.js';

/** Where the commands write; tests pass their own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Called once when a command fails, with the exit code to end with. */
  fail(exitCode: number): void;
}

export const consoleIo: CliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  fail: (exitCode) => {
    process.exitCode = exitCode;
  },
};

export const DEFAULT_WORKSPACE = 'default';
export const DAY_MS = 86_400_000;

export function capArg(value: string): number | null {
  if (value === 'none') return null;
  return wholeNumber(value);
}

export function monthArg(value: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value))
    throw new InvalidArgumentError('expected a month as YYYY-MM, e.g. 2026-11');
  return value;
}

export function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError('expected a whole number of requests, e.g. 100000');
  }
  return Number(value);
}

/** `2027-01-31` (00:00 UTC), an ISO 8601 timestamp with offset, or `<n>d` (n days from now). */
export function parseExpiry(value: string, now: Date = new Date()): Date {
  const days = /^(\d{1,5})d$/.exec(value);
  if (days) return new Date(now.getTime() + Number(days[1]) * DAY_MS);
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const date = new Date(`${value}T00:00:00Z`);
    if (!Number.isNaN(date.getTime()) && date.toISOString().startsWith(value)) return date;
  }
  const epoch = parseIsoToEpoch(value);
  if (epoch !== null) return new Date(epoch * 1000);
  throw new InvalidArgumentError(
    'expected an ISO 8601 date or timestamp (2027-01-31, 2027-01-31T12:00:00Z) or a number of days (90d)',
  );
}

export const shortIso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Left-aligned columns separated by two spaces. */
export function formatTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

interface Resolved {
  workspace: Workspace;
  project: Project;
}

/**
 * The workspace named by `workspaceRef` (default: "default"), created when missing (said on `io`);
 * an id (`ws_…`) that does not exist is an error, not a new workspace's name.
 */
export async function workspaceForCreate(
  store: AccountsStore,
  io: CliIo,
  workspaceRef?: string,
): Promise<Workspace> {
  const ref = workspaceRef ?? DEFAULT_WORKSPACE;
  const found = await store.findWorkspace(ref);
  if (found) return found;
  if (/^ws_[0-9a-z]+$/.test(ref)) throw new AccountsError('not_found', `no workspace with id "${ref}"`);
  const created = await store.createWorkspace({ name: ref });
  io.out(`created workspace "${created.name}" (${created.id})`);
  return created;
}

/** The project to create a key in: found by id or name, else created (in --workspace or "default"). */
export async function projectForCreate(
  store: AccountsStore,
  io: CliIo,
  projectRef: string,
  workspaceRef?: string,
): Promise<Resolved> {
  if (workspaceRef === undefined) {
    const project = await store.findProject(projectRef);
    if (project) return { project, workspace: (await store.findWorkspace(project.workspaceId))! };
  }
  if (/^prj_[0-9a-z]+$/.test(projectRef) && !(await store.findProject(projectRef))) {
    throw new AccountsError('not_found', `no project with id "${projectRef}"`);
  }
  const workspace = await workspaceForCreate(store, io, workspaceRef);
  const existing = await store.findProject(projectRef, workspace.id);
  if (existing) return { workspace, project: existing };
  const project = await store.createProject({ workspaceId: workspace.id, name: projectRef });
  io.out(`created project "${project.name}" (${project.id}) in workspace "${workspace.name}"`);
  return { workspace, project };
}

export async function existingWorkspace(store: AccountsStore, ref: string): Promise<Workspace> {
  const workspace = await store.findWorkspace(ref);
  if (!workspace) {
    throw new AccountsError('not_found', `no workspace "${ref}": see "npx server workspaces list"`);
  }
  return workspace;
}

export async function existingProject(
  store: AccountsStore,
  ref: string,
  workspaceId?: string,
): Promise<Project> {
  const project = await store.findProject(ref, workspaceId);
  if (!project) throw new AccountsError('not_found', `no project "${ref}": see "npx server projects list"`);
  return project;
}

/** Runs a command's `body` with the store open; a failure prints `<program>: <message>` and exits 1. */
export function storeRunner(program: Command, io: CliIo) {
  return <A extends unknown[]>(body: (store: AccountsStore, ...args: A) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args[args.length - 1] as Command;
      let store: AccountsStore | undefined;
      try {
        const { accountsDb } = command.optsWithGlobals<{ accountsDb?: string }>();
        const settings = loadSettings(process.env, accountsDb ? { ACCOUNTS_DB: accountsDb } : {});
        store = openConfiguredAccountsStore(settings);
        await body(store, ...(args as A));
      } catch (error) {
        io.err(`${program.name()}: ${(error as Error).message}`);
        io.fail(1);
      } finally {
        await store?.close();
      }
    };
}

export type StoreRunner = ReturnType<typeof storeRunner>;
