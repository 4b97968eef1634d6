/**
 * The second factor of two-factor sign-in (TOTP with otplib): checking an authenticator code once
 * per time step, and the recovery codes that stand in for it (ten, each usable once, stored as
 * sha256 hashes). Sign-in (routes-sign-in.tsx) asks for it after the e-mailed link, step-up and
 * turning it off (routes-account.tsx) ask for it again.
 */
import { randomInt } from 'node:crypto';
import { verify } from 'otplib';
import type { ConsoleUser } from '../accounts/index.js';
import type { ConsoleDeps } from './deps.js';
import { sha256 } from './security.js';

export const RECOVERY_CODES = 10;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
/** Wrong codes a sign-in may send before it has to start again with a new link. */
export const SECOND_FACTOR_TRIES = 5;

export const recoveryHash = (userId: string, code: string) =>
  sha256(`recovery\u0000${userId}\u0000${code.toLowerCase().replace(/[^a-z0-9]/g, '')}`);

export function recoveryCode(): string {
  let out = '';
  for (let i = 0; i < 10; i++) out += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

/**
 * The TOTP time step of a valid code (±30 s), or null. Steps up to `afterStep` are refused: a code
 * works once (the store records the step, `useTotpStep`).
 */
export async function totpStep(
  secret: string,
  code: string,
  afterStep: number | null,
): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await verify({
    secret,
    token: code,
    epochTolerance: 30,
    ...(afterStep !== null && { afterTimeStep: afterStep }),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

/** An authenticator code, or an unused recovery code (used up here). */
export async function secondFactorValid(
  deps: ConsoleDeps,
  user: ConsoleUser,
  code: string,
): Promise<boolean> {
  const trimmed = code.replace(/\s/g, '');
  if (user.totpSecret !== null) {
    const step = await totpStep(user.totpSecret, trimmed, user.totpLastStep);
    if (step !== null) return deps.store.useTotpStep(user.id, step);
  }
  return (
    /^[a-z0-9-]{10,11}$/i.test(trimmed) &&
    deps.store.useRecoveryCode(user.id, recoveryHash(user.id, trimmed), new Date())
  );
}
