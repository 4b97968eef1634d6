/**
 * `npx server invite <email> [--link]`: invites an address to the console during the invite-only
 * preview (the user is created; they sign in with their address). `--link` also prints a sign-in
 * link (15 minutes, once) for CONSOLE_URL, for a first sign-in without mail (`make demo`).
 */
import type { Command } from 'commander';
import { loadSettings } from '../shared/config.js';
import { openConfiguredAccountsStore } from '../accounts/open.js';
import type { AccountsStore } from '../accounts/index.js';
import { createSignInLink } from './sign-in-link.js';

export function registerInviteCommand(program: Command): void {
  program
    .command('invite')
    .description(
      'Invite an e-mail address to the web console (invite-only preview); it signs in by e-mailed link.',
    )
    .argument('<email>', 'the address to invite')
    .option('--link', 'also print a sign-in link for CONSOLE_URL (works once, for 15 minutes)')
    .action(async (email: string, options: { link?: boolean }, command: Command) => {
      let store: AccountsStore | undefined;
      try {
        const { accountsDb } = command.optsWithGlobals<{ accountsDb?: string }>();
        const settings = loadSettings(process.env, accountsDb ? { ACCOUNTS_DB: accountsDb } : {});
        if (options.link && !settings.CONSOLE_URL) {
          throw new Error(
            '--link needs CONSOLE_URL, the console origin the link opens (e.g. CONSOLE_URL=http://localhost:8081)',
          );
        }
        store = openConfiguredAccountsStore(settings);
        const user = await store.inviteUser(email);
        console.log(
          `invited ${user.email}: they sign in at ${settings.CONSOLE_URL || '<CONSOLE_URL>'}/sign-in`,
        );
        if (options.link) {
          console.log(
            `sign-in link: ${await createSignInLink(store, new URL(settings.CONSOLE_URL).origin, user.id)}`,
          );
        }
      } catch (error) {
        console.error(`${program.name()}: ${(error as Error).message}`);
        process.exitCode = 1;
      } finally {
        await store?.close();
      }
    });
}
