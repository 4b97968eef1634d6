/**
 * What the web console (console) keeps in the accounts store besides workspaces, projects,
 * keys and members: users' two-factor settings, sessions, sign-in links, recovery codes and the
 * daily usage per key. Tokens and codes are stored only as sha256 hashes.
 */
import type { MemberRole, Workspace } from './records.js';

export interface ConsoleUser {
  id: string;
  email: string;
  /** The TOTP secret while enrolling or enrolled; `totpEnabledAt` says whether it is in use. */
  totpSecret: string | null;
  totpEnabledAt: Date | null;
  /** The last TOTP time step accepted (codes of it and earlier steps are refused). */
  totpLastStep: number | null;
}

export interface ConsoleSession {
  /** sha256 of the cookie's token. */
  id: string;
  userId: string;
  createdAt: Date;
  authenticatedAt: Date;
  lastSeenAt: Date;
  expiresAt: Date;
  stepCodeHash: string | null;
  stepCodeExpiresAt: Date | null;
  stepCodeTries: number;
  /** Set while the sign-in waits for the second factor (two-factor sign-in); null for a full session. */
  secondFactorPendingSince: Date | null;
}

export interface Membership {
  workspace: Workspace;
  role: MemberRole;
}

/** Counted requests of one key on one UTC day. */
export interface DailyUsage {
  keyId: string;
  projectId: string;
  workspaceId: string;
  /** `YYYY-MM-DD` (UTC). */
  day: string;
  count: number;
}

export interface ConsoleStore {
  findUserByEmail(email: string): Promise<ConsoleUser | null>;
  getUser(id: string): Promise<ConsoleUser | null>;
  /** Creates the user when missing (an invitation); returns them either way. */
  inviteUser(email: string, now?: Date): Promise<ConsoleUser>;
  /** Workspaces the user is a member of, oldest first. */
  memberships(userId: string): Promise<Membership[]>;
  /** The user's role in the workspace, or null when not a member. */
  memberRole(workspaceId: string, userId: string): Promise<MemberRole | null>;

  createSignInLink(hash: string, userId: string, now: Date, expiresAt: Date): Promise<void>;
  /** Marks an unused, unexpired link used and returns its user; null for any other link. */
  consumeSignInLink(hash: string, now: Date): Promise<string | null>;
  /** Whether a link is unused and unexpired, without using it. */
  signInLinkUsable(hash: string, now: Date): Promise<boolean>;

  createSession(
    session: Omit<
      ConsoleSession,
      'stepCodeHash' | 'stepCodeExpiresAt' | 'stepCodeTries' | 'secondFactorPendingSince'
    > & { secondFactorPendingSince?: Date | null },
  ): Promise<void>;
  getSession(id: string): Promise<ConsoleSession | null>;
  touchSession(id: string, now: Date): Promise<void>;
  /** Gives a session a new id (rotation), with a new authentication time when given. */
  rotateSession(oldId: string, newId: string, authenticatedAt: Date | null): Promise<boolean>;
  /**
   * Completes a sign-in that waited for its second factor: a new id, authenticated now, a new
   * absolute end, no longer pending. False when there is no such pending session.
   */
  completeSecondFactor(oldId: string, newId: string, now: Date, expiresAt: Date): Promise<boolean>;
  deleteSession(id: string): Promise<void>;
  deleteUserSessions(userId: string): Promise<void>;
  setStepCode(sessionId: string, hash: string | null, expiresAt: Date | null): Promise<void>;
  /** Counts a wrong step-up code; returns the tries so far. */
  countStepCodeTry(sessionId: string): Promise<number>;

  setTotp(userId: string, secret: string | null, enabledAt: Date | null): Promise<void>;
  /** Records an accepted TOTP time step; false when it is not later than the last one (a replay). */
  useTotpStep(userId: string, step: number): Promise<boolean>;
  replaceRecoveryCodes(userId: string, hashes: readonly string[]): Promise<void>;
  /** Uses an unused recovery code of the user; false when there is none with this hash. */
  useRecoveryCode(userId: string, hash: string, now: Date): Promise<boolean>;
  countRecoveryCodes(userId: string): Promise<number>;

  /** Adds counted requests per key and day, and sets those keys' `last used` to `usedAt`. */
  addDailyUsage(rows: readonly DailyUsage[], usedAt: Date): Promise<void>;
  /** Daily rows of a workspace from `fromDay` to `toDay` (inclusive, YYYY-MM-DD). */
  listDailyUsage(workspaceId: string, fromDay: string, toDay: string): Promise<DailyUsage[]>;
}
