/**
 * `server backup --to <file>` and `server restore --from <file> [--replace]`: the embedded accounts
 * store (the SQLite file of `--accounts-db` or ACCOUNTS_DB) copied while servers use it, and put
 * back (accounts/backup.ts). A PostgreSQL store (DATABASE_URL) is backed up with pg_dump instead.
 */
import type { Command } from 'commander';
import { loadSettings } from '../shared/config.js';
import { backupAccountsStore, restoreAccountsStore } from './backup.js';
import type { CliIo } from './cli-support.js';

const kib = (bytes: number) => `${Math.ceil(bytes / 1024).toLocaleString('en-US')} KiB`;
const counted = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;

export function registerBackupCommands(program: Command, io: CliIo): void {
  /** The SQLite file the other admin commands would open; refused when the store is PostgreSQL. */
  const accountsFile = (command: Command): string => {
    const { accountsDb } = command.optsWithGlobals<{ accountsDb?: string }>();
    const settings = loadSettings(process.env, accountsDb ? { ACCOUNTS_DB: accountsDb } : {});
    if (settings.DATABASE_URL) {
      throw new Error(
        'the accounts store is PostgreSQL (DATABASE_URL is set): back it up with pg_dump and restore it with ' +
          'pg_restore (docs/production.md, "Backups"); backup and restore copy the SQLite store (ACCOUNTS_DB)',
      );
    }
    return settings.ACCOUNTS_DB;
  };
  const run =
    <O>(body: (options: O, file: string) => Promise<void>) =>
    async (options: O, command: Command): Promise<void> => {
      try {
        await body(options, accountsFile(command));
      } catch (error) {
        io.err(`${program.name()}: ${(error as Error).message}`);
        io.fail(1);
      }
    };

  program
    .command('backup')
    .description(
      'Copy the accounts store (the SQLite file of --accounts-db or ACCOUNTS_DB) to a new file while servers use ' +
        'it: one consistent snapshot (SQLite backup API).',
    )
    .requiredOption('--to <file>', 'the backup file to create (never replaces one)')
    .action(
      run<{ to: string }>(async (options, file) => {
        const done = await backupAccountsStore(file, options.to);
        io.out(
          `backed up ${file} to ${done.file}: accounts schema ${done.schemaVersion}, ` +
            `${counted(done.workspaces, 'workspace')}, ${counted(done.keys, 'key')}, ${kib(done.bytes)}, ` +
            `one snapshot in ${Math.round(done.ms)} ms`,
        );
      }),
    );

  program
    .command('restore')
    .description(
      'Make the accounts store (the SQLite file of --accounts-db or ACCOUNTS_DB) a copy of a backup, migrated to ' +
        'this version; an existing store is replaced only with --replace.',
    )
    .requiredOption('--from <file>', 'a backup made by "server backup"')
    .option(
      '--replace',
      'replace an existing store (stop every server using it first); its content is kept as <file>.before-restore-<time>',
    )
    .action(
      run<{ from: string; replace?: boolean }>(async (options, file) => {
        const done = await restoreAccountsStore(options.from, file, { replace: options.replace === true });
        const migrated = done.migratedTo === done.schemaVersion ? '' : ` (migrated to ${done.migratedTo})`;
        io.out(
          `restored ${options.from} to ${done.file}: accounts schema ${done.schemaVersion}${migrated}, ` +
            `${counted(done.workspaces, 'workspace')}, ${counted(done.keys, 'key')}`,
        );
        if (done.keptAs) io.out(`the store it replaced is kept as ${done.keptAs}`);
        io.out(`serve it with ACCOUNTS_DB=${file} (or --accounts-db ${file})`);
      }),
    );
}
