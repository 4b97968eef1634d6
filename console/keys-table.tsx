/**
 * The keys of a project as the project page lists them: active keys first (newest first) with who
 * created them, when they were last used and their count this month; revoked and expired keys
 * folded away below, with when they ended; where scripts run, more than five active keys get a
 * filter (console.js). Each cell carries its column's name (data-label), so at
 * phone width the rows become cards without sideways scrolling (console.css).
 */
import { MAX_ACTIVE_KEYS_PER_WORKSPACE, keyStatus, type KeyRecord } from '../accounts/index.js';
import { formatCount, formatDate, formatTime } from './layout.js';
import { PLAYGROUND_LABEL } from './playground.js';

/** Active keys of a list at `now`. */
export const activeKeys = (keys: readonly KeyRecord[], now: Date) =>
  keys.filter((k) => keyStatus(k, now) === 'active');

/** `3 of 25 active keys` in the workspace, warning from 90% of the limit. */
export function KeyCount({ active }: { active: number }) {
  const level =
    active >= MAX_ACTIVE_KEYS_PER_WORKSPACE
      ? 'full'
      : active >= MAX_ACTIVE_KEYS_PER_WORKSPACE * 0.9
        ? 'near'
        : '';
  return (
    <p class={level ? 'key-count warn' : 'key-count'} id="key-count">
      <strong>
        {active} of {MAX_ACTIVE_KEYS_PER_WORKSPACE}
      </strong>{' '}
      active keys in this workspace
      {level === 'full' && ': the most allowed. Revoke a key before creating another.'}
      {level === 'near' && `: ${MAX_ACTIVE_KEYS_PER_WORKSPACE - active} more can be created.`}
      {level === '' && '. Revoked and expired keys do not count.'}
    </p>
  );
}

function Label({ k }: { k: KeyRecord }) {
  return (
    <>
      {k.label}
      {k.label === PLAYGROUND_LABEL && <span class="muted"> (used by the playground)</span>}
    </>
  );
}

const createdBy = (k: KeyRecord) => k.createdBy ?? 'admin CLI';

export function KeysTable({
  keys,
  usage,
  base,
  manages,
  now,
}: {
  keys: readonly KeyRecord[];
  usage: ReadonlyMap<string, number>;
  base: string;
  manages: boolean;
  now: Date;
}) {
  const newestFirst = [...keys].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime());
  const active = newestFirst.filter((k) => keyStatus(k, now) === 'active');
  const ended = newestFirst.filter((k) => keyStatus(k, now) !== 'active');
  return (
    <>
      {active.length === 0 ? (
        <p class="empty">
          No active keys in this project.{' '}
          {manages ? 'Create one to call the API.' : 'An owner or admin of the workspace can create one.'}
        </p>
      ) : (
        <>
          {active.length > 5 && (
            <label class="filter" hidden data-filter="active-keys">
              Filter the keys
              <input type="search" maxLength={100} />
            </label>
          )}
          <table class="cards" id="active-keys">
            <caption class="muted">Active keys, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col" class="num">
                  This month
                </th>
                {manages && <th scope="col">Action</th>}
              </tr>
            </thead>
            <tbody>
              {active.map((k) => (
                <tr>
                  <td data-label="Label">
                    <Label k={k} />
                  </td>
                  <td data-label="Key" class="mono">
                    {k.display}
                  </td>
                  <td data-label="Created">
                    <span class="date">{formatDate(k.createdAt)}</span>{' '}
                    <span class="muted by">by {createdBy(k)}</span>
                  </td>
                  <td data-label="Last used">
                    <span class="date">{formatTime(k.lastUsedAt)}</span>
                  </td>
                  <td data-label="Expires">
                    <span class="date">{k.expiresAt === null ? 'never' : formatDate(k.expiresAt)}</span>
                  </td>
                  <td data-label="This month" class="num">
                    {formatCount(usage.get(k.id) ?? 0)}
                  </td>
                  {manages && (
                    <td data-label="Action">
                      <a href={`${base}/keys/${k.id}/revoke`} aria-label={`Revoke ${k.label} (${k.display})`}>
                        Revoke
                      </a>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      {ended.length > 0 && (
        <details class="ended">
          <summary>
            {ended.length === 1 ? '1 revoked or expired key' : `${ended.length} revoked or expired keys`}
          </summary>
          <table class="cards" id="ended-keys">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Ended</th>
                <th scope="col" class="num">
                  This month
                </th>
              </tr>
            </thead>
            <tbody>
              {ended.map((k) => {
                const state = keyStatus(k, now);
                return (
                  <tr>
                    <td data-label="Label">
                      <Label k={k} />
                    </td>
                    <td data-label="Key" class="mono">
                      {k.display}
                    </td>
                    <td data-label="Created">
                      <span class="date">{formatDate(k.createdAt)}</span>{' '}
                      <span class="muted by">by {createdBy(k)}</span>
                    </td>
                    <td data-label="Ended">
                      <span class={`state ${state}`}>{state}</span>{' '}
                      <span class="date">{formatTime(state === 'revoked' ? k.revokedAt : k.expiresAt)}</span>
                    </td>
                    <td data-label="This month" class="num">
                      {formatCount(usage.get(k.id) ?? 0)}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </details>
      )}
    </>
  );
}
