/**
 * The events of a release pair (docs/decisions/0034): the changes `builder diff` computes
 * (builder/diff.ts: ranges, routes, the networks of domains' hosting runs) and one merge pass over
 * both releases' `domain_page` (each name's current addresses and outcome per record type),
 * matched against every project's watch entries (WatchIndex). Each event's id is a hash of what it
 * says (project, pair, kind, subject, detail), so computing a pair again gives the same events.
 */
import { createHash } from 'node:crypto';
import type { NewWatchEvent, WatchEntry } from '../../accounts/watch-types.js';
import { diffReleases, mergeJoin, type Change } from '../../builder/diff.js';
import { parseCidr } from '../../shared/ip.js';
import type { Release } from '../../shared/queries/index.js';
import type { EventKind } from '../../shared/watch-events.js';
import type { WatchIndex } from './subjects.js';

export { EVENT_KINDS, type EventKind } from '../../shared/watch-events.js';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** `evt_` and 26 base32 characters (130 bits) of sha256 over the event's content. */
export function eventId(parts: readonly unknown[]): string {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length === 26) break;
  }
  return `evt_${out}`;
}

interface Network {
  asn: number | null;
  provider: string | null;
}

/** A name's DNS state as the events compare it: addresses (A and AAAA) and outcome per type. */
interface DnsState {
  addresses: string[];
  outcome: Record<string, string>;
}

type StateRow = [rtype: string, outcome: string, values: string[], ...rest: unknown[]];

function dnsState(states: string): DnsState {
  const addresses = new Set<string>();
  const outcome: Record<string, string> = {};
  for (const [rtype, result, values] of JSON.parse(states) as StateRow[]) {
    if (rtype !== 'A' && rtype !== 'AAAA') continue;
    outcome[rtype] = result;
    if (result === 'positive') for (const v of values) addresses.add(v);
  }
  return { addresses: [...addresses].sort(), outcome };
}

const EMPTY: DnsState = { addresses: [], outcome: {} };
const PAGES_SQL = `SELECT name, states FROM domain_page ORDER BY name`;

/** Computes the events of the pair for the entries of `index`. */
export async function computeWatchEvents(
  older: Release,
  newer: Release,
  index: WatchIndex,
): Promise<NewWatchEvent[]> {
  const events = new Map<string, NewWatchEvent>();
  const emit = (entry: WatchEntry, kind: EventKind, detail: Record<string, unknown>) => {
    const id = eventId([entry.projectId, older.id, newer.id, kind, entry.kind, entry.subject, detail]);
    if (events.has(id)) return;
    const payload = JSON.stringify({
      type: kind,
      timestamp: newer.builtAt,
      data: {
        id,
        subject: { kind: entry.kind, value: entry.subject },
        release: newer.id,
        previous_release: older.id,
        ...detail,
      },
    });
    events.set(id, {
      id,
      projectId: entry.projectId,
      release: newer.id,
      previousRelease: older.id,
      kind,
      subject: entry.subject,
      payload,
    });
  };
  const each = (entries: readonly WatchEntry[], kind: EventKind, detail: Record<string, unknown>) => {
    for (const entry of entries) emit(entry, kind, detail);
  };

  if (index.size === 0) return [];
  await diffReleases(older, newer, (change: Change) => {
    switch (change.change) {
      case 'range_added':
      case 'range_gone': {
        const cidr = parseCidr(change.prefix as string);
        if (!cidr) return;
        const { source, prefix, provider, category } = change;
        each(
          index.overlapping(cidr),
          change.change === 'range_added' ? 'ip.range_entered' : 'ip.range_left',
          {
            range: { prefix, source, provider, category },
          },
        );
        return;
      }
      case 'route_added':
        each(index.asn(change.asn as number | null), 'asn.route_added', { route: change.route });
        return;
      case 'route_gone':
        each(index.asn(change.asn as number | null), 'asn.route_removed', { route: change.route });
        return;
      case 'route_asn_changed':
        each(index.asn(change.old_asn as number | null), 'asn.route_removed', {
          route: change.route,
          new_asn: change.new_asn,
        });
        each(index.asn(change.new_asn as number | null), 'asn.route_added', {
          route: change.route,
          old_asn: change.old_asn,
        });
        return;
      case 'domain_moved':
      case 'domain_started':
      case 'domain_ended': {
        const domain = change.domain as string;
        const was = (change.old_networks ?? []) as Network[];
        const is = (change.networks ?? []) as Network[];
        each(index.domain(domain), 'domain.network_changed', { domain, old_networks: was, networks: is });
        const asns = (list: Network[]) => new Set(list.map((n) => n.asn).filter((a) => a !== null));
        const [before, after] = [asns(was), asns(is)];
        for (const asn of after)
          if (!before.has(asn)) each(index.asn(asn), 'asn.domain_added', { domain, asn });
        for (const asn of before)
          if (!after.has(asn)) each(index.asn(asn), 'asn.domain_removed', { domain, asn });
        return;
      }
    }
  });

  type PageRow = { name: string; states: string };
  mergeJoin(
    older.db.prepare(PAGES_SQL).iterate() as Iterable<PageRow>,
    newer.db.prepare(PAGES_SQL).iterate() as Iterable<PageRow>,
    (row) => row.name,
    (domain, beforeRow, afterRow) => {
      const before = beforeRow?.states;
      const after = afterRow?.states;
      const watched = index.domain(domain);
      if (watched.length === 0 && !index.watchesAddresses) return;
      const was = before ? dnsState(before) : EMPTY;
      const is = after ? dnsState(after) : EMPTY;
      const sameAddresses = was.addresses.join(' ') === is.addresses.join(' ');
      if (
        watched.length > 0 &&
        (!sameAddresses || JSON.stringify(was.outcome) !== JSON.stringify(is.outcome))
      ) {
        each(watched, 'domain.dns_changed', { domain, old: was, new: is });
      }
      if (sameAddresses || !index.watchesAddresses) return;
      const old = new Set(was.addresses);
      const now = new Set(is.addresses);
      for (const address of is.addresses) {
        if (!old.has(address)) each(index.address(address), 'ip.domain_added', { domain, address });
      }
      for (const address of was.addresses) {
        if (!now.has(address)) each(index.address(address), 'ip.domain_removed', { domain, address });
      }
    },
  );
  return [...events.values()];
}
