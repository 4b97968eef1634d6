/**
 * The network of an address under the release's range tables: its routing ASN and the
 * cloud/hosting/CDN provider whose published range holds it.
 */
import type Database from 'better-sqlite3';
import { parseIp } from '../../shared/ip.js';
import { findIpBogon } from '../../shared/bogons.js';
import type { NetworkInfo } from './hosting-runs.js';
import type { ProviderRanges } from './provider-ranges.js';
import type { RangeTable } from './range-table.js';

/** Network (routing ASN + cloud/hosting/CDN provider under this release) of an address. */
export class NetworkResolver {
  private readonly byKey = new Map<string, NetworkInfo>();
  private readonly asnInfo = new Map<number, { name: string | null; category: string | null }>();
  static readonly BOGON: NetworkInfo = {
    key: 'bogon',
    public: false,
    asn: null,
    asName: null,
    provider: null,
    category: null,
  };

  constructor(
    db: Database.Database,
    private readonly asnTable: RangeTable<{ asn: number | null }>,
    private readonly ranges: Pick<ProviderRanges, 'hostingByAddress'>,
  ) {
    const rows = db.prepare(`SELECT asn, name, category FROM asn`).all() as Array<{
      asn: number;
      name: string | null;
      category: string | null;
    }>;
    for (const row of rows) this.asnInfo.set(row.asn, { name: row.name, category: row.category });
  }

  of(value: string): NetworkInfo {
    const ip = parseIp(value);
    if (!ip || findIpBogon(ip)) return NetworkResolver.BOGON;
    const asn = this.asnTable.find(ip.version, ip.value)?.asn ?? null;
    const hosting = this.ranges.hostingByAddress.find(ip.version, ip.value);
    const as = asn !== null ? this.asnInfo.get(asn) : undefined;
    // The category is part of the identity: otherwise an AS+provider pair with ranges of two
    // categories (AWS CloudFront and EC2 in one AS) would take the category of whichever
    // address happened to be looked up first.
    const key = `${asn}|${hosting?.provider ?? ''}|${hosting?.category ?? as?.category ?? ''}`;
    let info = this.byKey.get(key);
    if (!info) {
      info = {
        key,
        public: true,
        asn,
        asName: as?.name ?? null,
        provider: hosting?.provider ?? null,
        category: hosting?.category ?? as?.category ?? null,
      };
      this.byKey.set(key, info);
    }
    return info;
  }
}
