/**
 * Splits one CSV line (RFC 4180 quoting: fields may be quoted, `""` inside quotes is one `"`).
 * Returns null when a quoted field is not closed or a closing quote is followed by anything
 * other than a comma. Lines without any `"` take a fast path: a plain split.
 */
export function splitCsvLine(line: string): string[] | null {
  if (!line.includes('"')) return line.split(',');
  const fields: string[] = [];
  let i = 0;
  const length = line.length;
  for (;;) {
    if (line.charCodeAt(i) === 34 /* " */) {
      let value = '';
      let j = i + 1;
      for (;;) {
        const close = line.indexOf('"', j);
        if (close < 0) return null;
        value += line.slice(j, close);
        if (line.charCodeAt(close + 1) === 34) {
          value += '"';
          j = close + 2;
          continue;
        }
        i = close + 1;
        break;
      }
      fields.push(value);
      if (i === length) return fields;
      if (line.charCodeAt(i) !== 44 /* , */) return null;
      i++;
    } else {
      const comma = line.indexOf(',', i);
      const end = comma < 0 ? length : comma;
      const value = line.slice(i, end);
      if (value.includes('"')) return null;
      fields.push(value);
      if (comma < 0) return fields;
      i = comma + 1;
    }
  }
}
