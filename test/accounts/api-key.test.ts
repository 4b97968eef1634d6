/** The key format: prefix, length, alphabet, checksum, randomness, display and hash. */
import t from 'tap';
import { KEY_LENGTH, displayKey, generateKey, hashKey, looksLikeKey } from '../../accounts/index.js';
import { newId } from '../../accounts/ids.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

t.test('shape', async (t) => {
  const key = generateKey();
  t.equal(KEY_LENGTH, 35);
  t.equal(key.length, KEY_LENGTH);
  t.match(key, /^sk_[0-9A-Za-z]{32}$/);
  t.ok(looksLikeKey(key));
  // 26 random base62 characters: 26 × log2(62) ≥ 128 bits even without the 4 that are displayed.
  t.ok((26 - 4) * Math.log2(62) >= 128);
});

t.test('distinct keys, every body character position varies, all symbols used', async (t) => {
  const keys = Array.from({ length: 2000 }, generateKey);
  t.equal(new Set(keys).size, keys.length, 'no repeats');
  for (let i = 3; i < 3 + 26; i++) {
    t.ok(new Set(keys.map((k) => k[i])).size > 50, `position ${i} takes many values`);
  }
  const seen = new Set(keys.join(''));
  for (const c of BASE62) t.ok(seen.has(c), `symbol ${c} appears`);
});

t.test('the checksum rejects every one-character change', async (t) => {
  const key = generateKey();
  let tried = 0;
  let accepted = 0;
  for (let i = 0; i < key.length; i++) {
    for (const c of BASE62) {
      if (c === key[i]) continue;
      const changed = key.slice(0, i) + c + key.slice(i + 1);
      tried++;
      if (looksLikeKey(changed)) accepted++;
    }
  }
  t.equal(accepted, 0, `none of ${tried} single-character changes accepted`);
  // Swapping two neighbouring different characters of the body.
  for (let i = 3; i < key.length - 1; i++) {
    if (key[i] === key[i + 1]) continue;
    const swapped = key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2);
    t.notOk(looksLikeKey(swapped), `swap at ${i}`);
  }
});

t.test('malformed tokens', async (t) => {
  const key = generateKey();
  for (const token of [
    '',
    'sk_',
    key.slice(0, -1),
    `${key}x`,
    `SK_${key.slice(3)}`,
    `pk_${key.slice(3)}`,
    `${key.slice(0, 10)}-${key.slice(11)}`,
    ` ${key.slice(1)}`,
    `Bearer ${key}`,
    'sk_' + 'a'.repeat(32),
  ]) {
    t.notOk(looksLikeKey(token), JSON.stringify(token));
  }
});

t.test('display and hash', async (t) => {
  const key = generateKey();
  const display = displayKey(key);
  t.equal(display, `${key.slice(0, 7)}…${key.slice(-4)}`);
  t.match(display, /^sk_[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/);
  t.match(hashKey(key), /^[0-9a-f]{64}$/);
  t.equal(hashKey(key), hashKey(key));
  t.not(hashKey(key), hashKey(generateKey()));
  // sha256 hex of the whole token (test vector of FIPS 180-2).
  t.equal(hashKey('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
});

t.test('ids are prefixed and distinct', async (t) => {
  t.match(newId('workspace'), /^ws_[0-9a-z]{16}$/);
  t.match(newId('project'), /^prj_[0-9a-z]{16}$/);
  t.match(newId('key'), /^key_[0-9a-z]{16}$/);
  t.match(newId('user'), /^usr_[0-9a-z]{16}$/);
  const ids = Array.from({ length: 1000 }, () => newId('key'));
  t.equal(new Set(ids).size, ids.length);
});
