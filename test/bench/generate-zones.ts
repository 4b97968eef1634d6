/**
 * Zone files for the collector benchmark: N seed domains `d<i>.z<k>.bench` spread over Z zones,
 * each with an A and (mostly) an AAAA record and a `www.` name that is mostly a CNAME to the
 * domain. Deterministic in i:
 *
 * - 2% of the domains have no AAAA (nodata), 1% have no `www.` name (nxdomain);
 * - 75% of the `www.` names are a CNAME to the domain (a chain of one), the rest have their own
 *   A and AAAA records.
 *
 * Returns the seed list (rank order) and the expected number of answers per outcome.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface GeneratedZones {
  origins: string[];
  domains: string[];
  expected: { positive: number; nodata: number; nxdomain: number };
}

function ipv4(i: number): string {
  return `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
}

function ipv6(i: number, www: boolean): string {
  return `fd00:${www ? 'b' : 'a'}::${(i >>> 16).toString(16)}:${(i & 0xffff).toString(16)}`;
}

export function generateBenchZones(domains: number, zones: number, dir: string): GeneratedZones {
  fs.mkdirSync(dir, { recursive: true });
  const origins = Array.from({ length: zones }, (_, k) => `z${k}.bench`);
  const names: string[] = [];
  const expected = { positive: 0, nodata: 0, nxdomain: 0 };
  const out = origins.map((origin) => {
    const fd = fs.openSync(path.join(dir, `${origin}.zone`), 'w');
    fs.writeSync(
      fd,
      `$ORIGIN ${origin}.\n$TTL 300\n@ SOA ns.${origin}. hostmaster.${origin}. 1 3600 600 86400 300\n@ NS ns.${origin}.\n`,
    );
    return { fd, lines: [] as string[] };
  });
  const flush = (z: { fd: number; lines: string[] }): void => {
    fs.writeSync(z.fd, z.lines.join(''));
    z.lines = [];
  };
  for (let i = 0; i < domains; i++) {
    const k = i % zones;
    const z = out[k]!;
    const label = `d${i}`;
    names.push(`${label}.${origins[k]}`);
    const noAaaa = i % 50 === 7;
    const noWww = i % 100 === 3;
    z.lines.push(`${label} A ${ipv4(i)}\n`);
    if (!noAaaa) z.lines.push(`${label} AAAA ${ipv6(i, false)}\n`);
    expected.positive += noAaaa ? 1 : 2;
    expected.nodata += noAaaa ? 1 : 0;
    if (noWww) {
      expected.nxdomain += 2;
    } else if (i % 4 !== 0) {
      z.lines.push(`www.${label} CNAME ${label}\n`);
      expected.positive += noAaaa ? 1 : 2;
      expected.nodata += noAaaa ? 1 : 0;
    } else {
      z.lines.push(`www.${label} A ${ipv4(i)}\nwww.${label} AAAA ${ipv6(i, true)}\n`);
      expected.positive += 2;
    }
    if (z.lines.length >= 4096) flush(z);
  }
  for (const z of out) {
    flush(z);
    fs.closeSync(z.fd);
  }
  return { origins, domains: names, expected };
}
