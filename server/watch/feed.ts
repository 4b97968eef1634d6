/**
 * The change feed (GET /v1/changes, the MCP tool list_changes; docs/api.md#get-v1changes) over the
 * accounts store's events: a project's events oldest first by (release, id), each item the body a
 * webhook delivers. The cursor is the last event id of the page: events are never rewritten, so a
 * cursor stays good across releases; a page is full when one more event follows it.
 */
import { AccountsError, type AccountsStore } from '../../accounts/index.js';
import { ApiError, QueryValidationError } from '../../shared/errors.js';
import type { ChangeFeed } from '../../shared/operations.js';
import { EVENT_ID_RE } from '../../shared/watch-events.js';
import { parseWatchSubject } from './subjects.js';

const invalid = (name: string, msg: string) =>
  new QueryValidationError([{ loc: ['query', name], msg, type: 'value_error' }]);

export function changeFeed(store: Pick<AccountsStore, 'listEvents'>): ChangeFeed {
  return {
    async list({ projectId, since, cursor, kinds, subject, limit }) {
      if (cursor !== undefined && !EVENT_ID_RE.test(cursor)) throw new ApiError('invalid_cursor');
      let normalized: string | undefined;
      if (subject !== undefined) {
        const parsed = parseWatchSubject(subject);
        if (!parsed.ok) throw invalid('subject', parsed.reason);
        normalized = parsed.subject;
      }
      const after =
        cursor !== undefined
          ? { eventId: cursor }
          : typeof since === 'string'
            ? { eventId: since }
            : typeof since === 'number'
              ? { moment: new Date(since * 1000) }
              : undefined;
      let events;
      try {
        events = await store.listEvents({
          projectId,
          since: after,
          kinds: kinds === undefined ? undefined : [...kinds],
          subject: normalized,
          limit: limit + 1,
        });
      } catch (error) {
        if (!(error instanceof AccountsError) || error.code !== 'not_found') throw error;
        if (cursor !== undefined) throw new ApiError('invalid_cursor');
        throw invalid('since', `no event ${String(since)} in this key's project`);
      }
      const page = events.slice(0, limit);
      return {
        items: page.map((event) => JSON.parse(event.payload) as object),
        next_cursor: events.length > limit ? page.at(-1)!.id : null,
      };
    },
  };
}
