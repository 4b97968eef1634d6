/**
 * What the admin CLI (`server webhooks …`) and the console's webhook pages share
 * (docs/decisions/0034): the checks an endpoint passes before it is stored (its URL through the
 * SSRF guard, its kinds among EVENT_KINDS, its description's length), the body of a test event,
 * and how long a rotated-out secret keeps signing.
 */
import { TEST_EVENT_KIND } from '../../accounts/store-outbox.js';
import { EVENT_KINDS } from '../../shared/watch-events.js';
import { checkWebhookUrl, type GuardOptions } from './ssrf.js';

/** After a rotation the previous secret signs too for this long (both signatures are sent). */
export const SECRET_ROTATION_MS = 86_400_000;

export const MAX_DESCRIPTION_CHARS = 200;

/** What an endpoint is made of before it is stored. */
export interface EndpointInput {
  url: string;
  /** Event kinds it receives; empty: every kind. */
  kinds: readonly string[];
  description?: string;
}

/** The problems of an endpoint, by field (none: it may be stored). */
export type EndpointProblems = Partial<Record<'url' | 'kinds' | 'description', string>>;

/** Checks an endpoint as the store must receive it: the URL passes the SSRF guard at creation. */
export async function endpointProblems(input: EndpointInput, guard: GuardOptions): Promise<EndpointProblems> {
  const problems: EndpointProblems = {};
  const unknown = input.kinds.filter((k) => !(EVENT_KINDS as readonly string[]).includes(k));
  if (unknown.length > 0)
    problems.kinds = `unknown event kinds ${unknown.join(', ')}: expected ${EVENT_KINDS.join(', ')}`;
  if ((input.description ?? '').length > MAX_DESCRIPTION_CHARS)
    problems.description = `a description has at most ${MAX_DESCRIPTION_CHARS} characters`;
  try {
    await checkWebhookUrl(input.url, guard);
  } catch (error) {
    problems.url = (error as Error).message;
  }
  return problems;
}

/** The body of a test event (`webhook.test`, which the change feed does not list). */
export const testEventPayload = (eventId: string, now = new Date()): string =>
  JSON.stringify({ type: TEST_EVENT_KIND, timestamp: now.toISOString(), data: { id: eventId } });
