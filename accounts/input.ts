/**
 * Validation of what callers hand the store (CLI today, the console later), shared by every store
 * implementation so they refuse the same inputs with the same messages.
 */
import { z } from 'zod';
import { AccountsError, DEFAULT_PLAN } from './store.js';
import { MEMBER_ROLES } from './records.js';
import type {
  CreateKeyInput,
  CreateProjectInput,
  CreateWorkspaceInput,
  MemberRole,
  Plan,
} from './records.js';

const name = (what: string) =>
  z
    .string()
    .trim()
    .min(1, `${what} must not be empty`)
    .max(100, `${what} must be at most 100 characters`)
    .refine(
      (s) => ![...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f),
      `${what} must not contain control characters`,
    );

const date = (what: string) =>
  z.date().refine((d) => !Number.isNaN(d.getTime()), `${what} is not a valid date`);

const workspaceInput = z.object({
  name: name('workspace name'),
  plan: z.string().trim().min(1, 'plan must not be empty').default(DEFAULT_PLAN),
  planExpiresAt: date('plan expiry').nullable().default(null),
});

const projectInput = z.object({
  workspaceId: z.string().min(1),
  name: name('project name'),
  monthlyCap: z
    .number()
    .int('monthly cap must be a whole number of requests')
    .min(0, 'monthly cap must not be negative')
    .max(Number.MAX_SAFE_INTEGER)
    .nullable()
    .default(null),
});

const keyInput = z.object({
  projectId: z.string().min(1),
  label: name('label'),
  expiresAt: date('expiry').nullable().default(null),
  createdBy: z.string().min(1).nullable().default(null),
});

function parse<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw new AccountsError('invalid_input', result.error.issues.map((i) => i.message).join('; '));
}

export function parseWorkspaceInput(input: CreateWorkspaceInput) {
  return parse(workspaceInput, input);
}

export function parseProjectInput(input: CreateProjectInput) {
  return parse(projectInput, input);
}

export function parseKeyInput(input: CreateKeyInput, now: Date) {
  const parsed = parse(keyInput, input);
  if (parsed.expiresAt && parsed.expiresAt.getTime() <= now.getTime()) {
    throw new AccountsError(
      'invalid_input',
      `expiry ${parsed.expiresAt.toISOString()} is not in the future: give a later date, or none for a key that never expires`,
    );
  }
  return parsed;
}

const monthlyCap = z
  .number()
  .int('monthly cap must be a whole number of requests')
  .min(0, 'monthly cap must not be negative')
  .max(Number.MAX_SAFE_INTEGER)
  .nullable();

export function parseMonthlyCap(cap: number | null): number | null {
  return parse(monthlyCap, cap);
}

const planInput = z.object({
  name: z
    .string()
    .trim()
    .regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'plan name must be 1 to 40 lowercase letters, digits, - or _')
    .refine((n) => n !== DEFAULT_PLAN, {
      message: `the ${DEFAULT_PLAN} plan's limits are settings (FREE_REQUESTS_PER_MINUTE, FREE_MONTHLY_QUOTA, FREE_MAX_PAGE_SIZE), not a table row`,
    }),
  requestsPerMinute: z.number().int('requests per minute must be a whole number').min(1).max(1e9),
  monthlyQuota: z.number().int('monthly quota must be a whole number').min(0).max(Number.MAX_SAFE_INTEGER),
  maxPageSize: z
    .number()
    .int()
    .min(1, 'page size must be 1 to 1000')
    .max(1000, 'page size must be 1 to 1000'),
});

export function parsePlanInput(plan: Plan): Plan {
  return parse(planInput, plan);
}

const email = z.string().trim().toLowerCase().email('not an e-mail address').max(254);

export function parseMemberInput(address: string, role: string): { email: string; role: MemberRole } {
  const parsedEmail = parse(email, address);
  if (!(MEMBER_ROLES as readonly string[]).includes(role)) {
    throw new AccountsError('invalid_input', `role must be one of ${MEMBER_ROLES.join(', ')}`);
  }
  return { email: parsedEmail, role: role as MemberRole };
}

export function parseWorkspacePlan(
  plan: string,
  expiresAt: Date | null,
): { plan: string; expiresAt: Date | null } {
  return parse(
    z.object({
      plan: z.string().trim().min(1, 'plan must not be empty'),
      expiresAt: date('plan expiry').nullable(),
    }),
    { plan, expiresAt },
  );
}
