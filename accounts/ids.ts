/**
 * Readable prefixed ids (`ws_…`, `prj_…`, `key_…`, `usr_…`): the prefix says what the id names,
 * the 16 lowercase letters and digits (≈ 83 random bits) keep them unguessable and easy to type.
 */
import { randomString } from './api-key.js';

export const ID_PREFIXES = {
  workspace: 'ws',
  project: 'prj',
  key: 'key',
  user: 'usr',
  watch: 'wat',
  endpoint: 'whe',
  attempt: 'att',
  testEvent: 'evt_test',
} as const;

const ID_ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

export function newId(kind: keyof typeof ID_PREFIXES): string {
  return `${ID_PREFIXES[kind]}_${randomString(16, ID_ALPHABET)}`;
}
