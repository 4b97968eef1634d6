/**
 * /llms-full.txt, the plain-text guide for agents: server/llms-full.txt with its `{{operations}}`
 * part written from the operation table (shared/operations.ts), so the guide lists exactly the
 * operations the API serves, with the parameters and errors they have.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_TABLE } from '../shared/errors.js';
import { OPERATIONS, PATH_PARAMETERS, QUERY_PARAMETERS, type Operation } from '../shared/operations.js';

/** server/llms-full.txt in the source tree, found from this file or its compiled copy in dist/. */
export function llmsGuidePath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the package root holding server/llms-full.txt');
    dir = parent;
  }
  return path.join(dir, 'server', 'llms-full.txt');
}

/** Error codes per status, for the errors line of an operation. */
function errorsLine(op: Operation): string {
  const codes = (status: number) =>
    Object.entries(ERROR_TABLE)
      .filter(([code, e]) => e.status === status && code !== 'payload_too_large' && code !== 'internal_error')
      .map(([code]) => code);
  const parts = op.errors.map((status) => {
    if (status === 422) {
      const own = [
        ...(op.pathParameter ? [PATH_PARAMETERS[op.pathParameter].code] : []),
        ...(op.alsoRefuses ?? []),
      ];
      const list = own.map((c) => `\`${c}\``);
      if (op.query.length > 0) list.push('a `detail` list for a query parameter out of range');
      return `422 (${list.join(', ')})`;
    }
    if (status === 400 || status === 410) return `${status} \`${codes(status)[0]}\``;
    return String(status);
  });
  return `Errors: ${[...parts, 500].join(', ')}.`;
}

function operationSection(op: Operation): string {
  const lines = [`### GET ${op.path}`, '', op.summary, ''];
  if (op.pathParameter) {
    lines.push(
      `- \`${op.pathParameter}\` (path, required): ${PATH_PARAMETERS[op.pathParameter].description}`,
    );
  }
  for (const name of op.query) {
    const p = QUERY_PARAMETERS[name];
    const fallback = 'fallback' in p ? `, default ${String(p.fallback)}` : '';
    lines.push(`- \`${name}\` (query, ${p.kind}${fallback}): ${p.description}`);
  }
  if (!op.pathParameter && op.query.length === 0) lines.push('- No parameters.');
  lines.push(`- ${op.description}`, `- Fields: ${op.fields}`, `- ${errorsLine(op)}`, '');
  return lines.join('\n');
}

/** The guide's text, with the operations part written from the table. */
export function renderGuide(template = fs.readFileSync(llmsGuidePath(), 'utf8')): string {
  if (!template.includes('{{operations}}'))
    throw new Error('server/llms-full.txt lacks its {{operations}} part');
  return template.replace('{{operations}}', OPERATIONS.map(operationSection).join('\n').trimEnd());
}
