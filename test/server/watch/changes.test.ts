/**
 * The change feed, GET /v1/changes and the MCP tool list_changes, through the one envelope: a
 * key sees its own project's events only, oldest first, paged with cursors that outlive a
 * release, after an event id or a moment, filtered by kind and subject; refusals of the arguments;
 * nothing kept (a new event shows at once). Every REST answer is checked against the OpenAPI
 * document by the test server's client.
 */
import t from 'tap';
import { request } from 'undici';
import type { NewWatchEvent } from '../../../accounts/watch-types.js';
import { createTestKey } from '../../helpers/accounts.js';
import { MODERN, modernToolCall } from '../../helpers/mcp-calls.js';
import { startTestServer } from '../../helpers/test-server.js';

const OLDER = '20261001T000000Z';
const NEWER = '20261002T000000Z';
const LATER = '20261003T000000Z';

function event(
  projectId: string,
  n: number,
  release: string,
  previous: string,
  kind: string,
  subject: { kind: string; value: string },
  detail: Record<string, unknown>,
): NewWatchEvent {
  const id = `evt_${String.fromCharCode(97 + n).repeat(26)}`;
  const built = `${release.slice(0, 4)}-${release.slice(4, 6)}-${release.slice(6, 8)}T00:00:00Z`;
  return {
    id,
    projectId,
    release,
    previousRelease: previous,
    kind,
    subject: subject.value,
    payload: JSON.stringify({
      type: kind,
      timestamp: built,
      data: { id, subject, release, previous_release: previous, ...detail },
    }),
  };
}

t.test('GET /v1/changes and list_changes', async (t) => {
  const s = await startTestServer(t);
  const mine = await createTestKey(s.store, {});
  const other = await createTestKey(s.store, { project: 'other' });
  const art = { kind: 'domain', value: 'art.example' };
  const cf = { kind: 'asn', value: '13335' };
  await s.store.insertWatchEvents([
    event(mine.projectId, 1, NEWER, OLDER, 'domain.network_changed', art, { old_networks: [], networks: [] }),
    event(mine.projectId, 0, NEWER, OLDER, 'asn.domain_added', cf, { domain: 'art.example' }),
    event(mine.projectId, 2, LATER, NEWER, 'asn.route_added', cf, { route: '1.1.1.0/24' }),
    event(other.projectId, 3, NEWER, OLDER, 'domain.network_changed', art, {
      old_networks: [],
      networks: [],
    }),
  ]);
  const ids = (body: unknown) =>
    (body as { items: Array<{ data: { id: string } }> }).items.map((i) => i.data.id);
  const a = 'evt_' + 'a'.repeat(26);
  const b = 'evt_' + 'b'.repeat(26);
  const c = 'evt_' + 'c'.repeat(26);
  const get = (q: string) => s.get(`/v1/changes${q}`, { key: mine.key });

  const all = await get('');
  t.equal(all.status, 200, all.text);
  t.same(ids(all.json()), [a, b, c], 'own project only, by (release, id)');
  t.equal((all.json() as { next_cursor: unknown }).next_cursor, null);
  t.same(ids((await s.get('/v1/changes', { key: other.key })).json()), ['evt_' + 'd'.repeat(26)]);

  const first = (await get('?limit=2')).json() as { next_cursor: string };
  t.same(ids(first), [a, b]);
  t.equal(first.next_cursor, b);
  const rest = (await get(`?limit=2&cursor=${first.next_cursor}`)).json() as { next_cursor: unknown };
  t.same(ids(rest), [c]);
  t.equal(rest.next_cursor, null);

  t.same(ids((await get(`?since=${a}`)).json()), [b, c], 'after an event');
  t.same(ids((await get('?since=2026-10-02T12:00:00Z')).json()), [c], 'of releases built after a moment');
  t.same(ids((await get('?kind=asn.route_added,domain.network_changed')).json()), [b, c]);
  t.same(ids((await get('?subject=AS13335')).json()), [a, c], 'subject normalized as a watch entry');
  t.same(ids((await get('?subject=ART.example.')).json()), [b]);

  const badSince = await get('?since=yesterday');
  t.equal(badSince.status, 422);
  t.match(badSince.json(), { detail: [{ loc: ['query', 'since'] }] });
  t.equal((await get('?kind=domain.moved')).status, 422);
  t.match((await get('?subject=not a name')).json(), { detail: [{ loc: ['query', 'subject'] }] });
  t.match((await get(`?since=evt_${'z'.repeat(26)}`)).json(), { detail: [{ loc: ['query', 'since'] }] });
  const badCursor = await get('?cursor=nope');
  t.equal(badCursor.status, 400);
  t.match(badCursor.json(), { error: 'invalid_cursor' });
  t.equal((await s.get('/v1/changes', { key: null })).status, 401);

  // Not kept: a new event is in the next answer.
  await s.store.insertWatchEvents([
    event(mine.projectId, 4, LATER, NEWER, 'asn.route_removed', cf, { route: '1.0.0.0/24' }),
  ]);
  t.same(ids((await get(`?since=${c}`)).json()), ['evt_' + 'e'.repeat(26)]);

  // The MCP tool: the same page through the same envelope.
  const call = modernToolCall('list_changes', { limit: 2, subject: 'AS13335' });
  const reply = await request(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      ...call.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${mine.key}`,
    },
    body: call.body,
  });
  const rpc = (await reply.body.json()) as {
    result: { structuredContent?: unknown; content: Array<{ text: string }> };
  };
  const page = JSON.parse(rpc.result.content[0]!.text) as { next_cursor: string };
  t.same(ids(page), [a, c], `MCP (${MODERN})`);
  t.equal(page.next_cursor, c);
  const refused = modernToolCall('list_changes', { since: 'yesterday' }, 2);
  const refusedReply = await request(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      ...refused.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${mine.key}`,
    },
    body: refused.body,
  });
  const refusedRpc = (await refusedReply.body.json()) as {
    result: { isError: boolean; content: Array<{ text: string }> };
  };
  t.equal(refusedRpc.result.isError, true);
  t.match(refusedRpc.result.content[0]!.text, /invalid_arguments/);
});
