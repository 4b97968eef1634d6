/**
 * /llms-full.txt, the plain-text guide for agents: server/api-docs/llms-full.txt with its `{{operations}}`
 * part written from the operation table (shared/operations.ts), so the guide lists exactly the
 * operations the API serves, with the parameters and errors they have.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ERROR_TABLE } from '../../shared/errors.js';
import { OPERATIONS, type Operation } from '../../shared/operations.js';
import { PATH_PARAMETERS, QUERY_PARAMETERS } from '../../shared/parameters.js';

/** server/api-docs/llms-full.txt in the source tree, found from this file or its compiled copy in dist/. */
export function llmsGuidePath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('cannot find the package root holding server/api-docs/llms-full.txt');
    dir = parent;
  }
  return path.join(dir, 'server', 'api-docs', 'llms-full.txt');
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

/** What the guide says of the deployment serving it. */
export interface GuideContext {
  /** The base URL clients reach this deployment at (scheme, host, port). */
  baseUrl: string;
  /** The coverage block of the release served (null: none loaded). */
  coverage: Record<string, unknown> | null;
}

/** The size of the data, from the release's coverage block (the demo has dozens of names). */
function namesResolved(coverage: GuideContext['coverage']): string {
  const seed = coverage?.seed as { names?: unknown; source?: unknown } | undefined;
  const www = (coverage?.derived as { www_names?: unknown } | undefined)?.www_names;
  if (typeof seed?.names !== 'number') return 'no data release is loaded yet, so none';
  const n = seed.names.toLocaleString('en-US');
  const source = typeof seed.source === 'string' ? ` (${seed.source})` : '';
  const wwwPart = typeof www === 'number' ? `, plus ${www.toLocaleString('en-US')} \`www.\` names` : '';
  return `the ${n} registered domains of this deployment's seed list${source}${wwwPart}`;
}

/** The guide's text, with the operations part written from the table and the deployment's figures. */
export function renderGuide(
  context: GuideContext,
  template = fs.readFileSync(llmsGuidePath(), 'utf8'),
): string {
  for (const part of ['{{operations}}', '{{base_url}}', '{{names_resolved}}'])
    if (!template.includes(part)) throw new Error(`server/api-docs/llms-full.txt lacks its ${part} part`);
  return template
    .replace('{{operations}}', OPERATIONS.map(operationSection).join('\n').trimEnd())
    .replaceAll('{{base_url}}', context.baseUrl)
    .replace('{{names_resolved}}', namesResolved(context.coverage));
}
