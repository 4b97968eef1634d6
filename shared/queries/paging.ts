/**
 * Keyset paging with opaque cursors (docs/api.md#paging). A cursor is base64url JSON
 * carrying the release id, a hash of the query it belongs to and the key of the last item served:
 * a cursor of another query is `invalid_cursor` (400), one issued under another release is
 * `cursor_expired` (410). The next page starts after the key, so page 1,000 costs what page 1 costs.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { Release } from './release.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
export const MAX_CURSOR_LENGTH = 1024;

export type CursorKey = Array<string | number>;

interface CursorPayload {
  /** Release id. */
  r: string;
  /** Query hash. */
  q: string;
  /** Key of the last item served. */
  k: CursorKey;
}

function queryHash(query: string): string {
  return createHash('sha256').update(query).digest('base64url').slice(0, 16);
}

export function encodeCursor(release: Release, query: string, key: CursorKey): string {
  const payload: CursorPayload = { r: release.id, q: queryHash(query), k: key };
  return Buffer.from(JSON.stringify(payload)).toString('base64url');
}

/**
 * The key of a cursor issued for `query` under `release`; undefined when there is no cursor.
 * `shape` checks the key's element types so a crafted cursor cannot reach SQL with odd values.
 */
export function decodeCursor(
  release: Release,
  query: string,
  cursor: string | undefined,
  shape: ReadonlyArray<'string' | 'number'>,
): CursorKey | undefined {
  if (cursor === undefined) return undefined;
  let payload: unknown;
  try {
    if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
      throw new Error('not base64url');
    }
    payload = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw new ApiError('invalid_cursor');
  }
  const p = payload as Partial<CursorPayload> | null;
  if (
    !p ||
    typeof p !== 'object' ||
    typeof p.r !== 'string' ||
    typeof p.q !== 'string' ||
    !Array.isArray(p.k) ||
    p.k.length !== shape.length ||
    p.k.some((v, i) => typeof v !== shape[i] || (typeof v === 'number' && !Number.isSafeInteger(v)))
  ) {
    throw new ApiError('invalid_cursor');
  }
  if (p.q !== queryHash(query)) throw new ApiError('invalid_cursor');
  if (p.r !== release.id) throw new ApiError('cursor_expired');
  return p.k;
}
