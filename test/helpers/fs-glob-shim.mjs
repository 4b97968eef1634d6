/**
 * `node --import ./fs-glob-shim.mjs …`: gives @modelcontextprotocol/conformance the `fs.globSync`
 * it imports (Node 22+) on Node 20. Only that package's `fs` import is redirected, to a module that
 * re-exports node:fs plus a small globSync (`*`, `**`, `?`; the runner only globs for result files).
 */
import { register } from 'node:module';

const FS_WITH_GLOB = `
import fs from 'node:fs';
import path from 'node:path';
export * from 'node:fs';
export default fs;
function toRegExp(pattern) {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      re += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^\${}()|[\\]\\\\]/g, '\\\\$&');
  }
  return new RegExp('^' + re + '$');
}
export function globSync(patterns, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const res = (Array.isArray(patterns) ? patterns : [patterns]).map(toRegExp);
  const out = [];
  const walk = (rel) => {
    for (const entry of fs.readdirSync(path.join(cwd, rel), { withFileTypes: true })) {
      const p = rel ? rel + '/' + entry.name : entry.name;
      if (res.some((r) => r.test(p))) out.push(p);
      if (entry.isDirectory()) walk(p);
    }
  };
  walk('');
  return out;
}
`;

const HOOKS = `
const target = ${JSON.stringify('data:text/javascript,' + encodeURIComponent(FS_WITH_GLOB))};
export async function resolve(specifier, context, next) {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes('/@modelcontextprotocol/conformance/')) {
    return { url: target, shortCircuit: true };
  }
  return next(specifier, context);
}
`;

register('data:text/javascript,' + encodeURIComponent(HOOKS));
