/**
 * Page sizes (docs/api.md#limits): free keys get at most 100 items per page; a larger `limit` is lowered (not
 * refused) and `next_cursor` continues.
 */
import type { KeyPrincipal } from '../../accounts/index.js';

export const FREE_PLAN = 'free';
export const FREE_PLAN_MAX_PAGE = 100;

export function pageLimit(principal: KeyPrincipal | null, requested: number): number {
  // The meter puts the plan's ceiling (FREE_MAX_PAGE_SIZE, or a table plan's) on the principal.
  if (principal?.maxPageSize !== undefined) return Math.min(requested, principal.maxPageSize);
  return principal?.plan === FREE_PLAN ? Math.min(requested, FREE_PLAN_MAX_PAGE) : requested;
}
