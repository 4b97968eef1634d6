/**
 * A strict Prometheus text-format (0.0.4) parser written for the tests, independent of prom-client:
 * it throws on anything it does not expect.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the text format strictly: throws on anything it does not expect. */
export function parsePrometheus(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const helps = new Set<string>();
  const samples: Sample[] = [];
  const seen = new Set<string>();
  const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
  if (!text.endsWith('\n')) throw new Error('the exposition does not end with a newline');
  const lines = text.slice(0, -1).split('\n');
  for (const [i, line] of lines.entries()) {
    const where = `line ${i + 1}: ${line}`;
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) (.*)$/.exec(line);
      if (!m) throw new Error(`bad comment, ${where}`);
      if (!NAME.test(m[2]!)) throw new Error(`bad metric name, ${where}`);
      if (m[1] === 'HELP') {
        if (helps.has(m[2]!)) throw new Error(`second HELP, ${where}`);
        helps.add(m[2]!);
      } else {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3]!))
          throw new Error(`bad type, ${where}`);
        if (types.has(m[2]!)) throw new Error(`second TYPE, ${where}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`bad sample, ${where}`);
    const labels: Record<string, string> = {};
    let rest = m[3] ?? '';
    while (rest.length > 0) {
      const l = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,|$)/.exec(rest);
      if (!l) throw new Error(`bad labels, ${where}`);
      if (l[1]! in labels) throw new Error(`repeated label, ${where}`);
      labels[l[1]!] = l[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
      rest = rest.slice(l[0].length);
    }
    const raw = m[4]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : raw === 'NaN' ? NaN : Number(raw);
    if (!/^(?:[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[+-]Inf|NaN)$/.test(raw))
      throw new Error(`bad value, ${where}`);
    const family = [...types.keys()].find(
      (f) => m[1] === f || (/_(bucket|sum|count|total|created)$/.test(m[1]!) && m[1]!.startsWith(`${f}_`)),
    );
    if (family === undefined) throw new Error(`sample before its TYPE, ${where}`);
    const key = `${m[1]}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`repeated series, ${where}`);
    seen.add(key);
    samples.push({ name: m[1]!, labels, value });
  }
  return { types, samples };
}

export const value = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;
