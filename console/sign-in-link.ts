/**
 * Sign-in links: 256 random bits in the URL, stored as their sha256, usable once and for 15
 * minutes (the console's sign-in page e-mails them; `npx server invite --link` prints one).
 */
import type { AccountsStore } from '../accounts/index.js';
import { randomToken, sha256 } from './security.js';

export const SIGN_IN_LINK_MS = 15 * 60_000;

/** A new sign-in link for the user, on the console at `origin`; `next` is the page it leads to. */
export async function createSignInLink(
  store: Pick<AccountsStore, 'createSignInLink'>,
  origin: string,
  userId: string,
  now = new Date(),
  next = '/',
): Promise<string> {
  const token = randomToken();
  await store.createSignInLink(sha256(token), userId, now, new Date(now.getTime() + SIGN_IN_LINK_MS));
  const then = next === '/' ? '' : `&next=${encodeURIComponent(next)}`;
  return `${origin}/sign-in/link?token=${token}${then}`;
}
