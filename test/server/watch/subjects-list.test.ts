/**
 * A bulk paste of watch entries (server/watch/subjects.ts parseWatchList), as the admin CLI's
 * `watch add --file` and the console's textarea read it: one entry per line, `#` comments and
 * blank lines skipped, all or nothing with every bad line named by its number.
 */
import t from 'tap';
import { parseWatchList } from '../../../server/watch/subjects.js';

t.same(parseWatchList('# ours\r\nShop.Example\n\n192.0.2.0/24  # a range\nas13335\n2001:DB8::1\n'), {
  ok: true,
  entries: [
    { kind: 'domain', subject: 'shop.example' },
    { kind: 'prefix', subject: '192.0.2.0/24' },
    { kind: 'asn', subject: '13335' },
    { kind: 'ip', subject: '2001:db8::1' },
  ],
});
t.same(parseWatchList('1.1.1.1\n192.0.2.1/24\n# fine\nAS0\n'), {
  ok: false,
  problems: [
    { line: 2, reason: '192.0.2.1/24: host bits are set, did you mean 192.0.2.0/24?' },
    { line: 4, reason: 'AS0: an AS number is 1 to 4294967295' },
  ],
});
t.same(parseWatchList('# nothing\n\n'), { ok: true, entries: [] }, 'comments only: no entries');
