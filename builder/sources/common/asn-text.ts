/** AS numbers as feeds write them: `13335` or `AS13335`. */

const ASN_RE = /^(?:AS)?(\d{1,10})$/i;
const MAX_ASN = 4294967295;

/** The AS number, or null when `text` is not one. 0 ("not routed") only when `allowZero`. */
export function parseAsnText(text: string, allowZero = false): number | null {
  const m = ASN_RE.exec(text);
  if (!m) return null;
  const asn = Number(m[1]);
  if (asn > MAX_ASN || (asn === 0 && !allowZero)) return null;
  return asn;
}
