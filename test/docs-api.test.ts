/**
 * Docs that fail when stale, and a repository that stands alone:
 * - docs/api.md, the API reference, has a `### METHOD path` section for every operation of the
 *   OpenAPI document (server/api-docs/openapi.ts), and names in code (`…`) every parameter, every
 *   property of every component schema, every error code (shared/errors.ts ERROR_TABLE, MCP's
 *   `invalid_arguments`, any `error` enum of the document), every response header and every MCP tool;
 *   its Errors table gives each code the status ERROR_TABLE gives it, and every anchor of it that
 *   the repository cites (code comments, docs) is one of its headings;
 * - no tracked file cites the product notes that were kept outside the repository (only the
 *   CHANGELOG and the performance log, which record history, may name them).
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildOpenApiDocument } from '../server/api-docs/openapi.js';
import { ERROR_TABLE, type ErrorCode } from '../shared/errors.js';
import { TOOLS } from '../shared/operations.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const API_DOC = 'docs/api.md';
const apiDoc = fs.readFileSync(path.join(root, API_DOC), 'utf8');

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);

const openapi = buildOpenApiDocument() as {
  paths: Record<string, Record<string, { parameters?: Array<{ name: string }> }>>;
  components: { schemas: Record<string, unknown> };
};

/**
 * Every name written as code in a Markdown text: the words of its code spans and fenced blocks,
 * split at anything but letters, digits, `_` and `-` (`items[].domain` gives `items` and `domain`).
 */
function codeWords(markdown: string): Set<string> {
  const words = new Set<string>();
  for (const [code] of markdown.matchAll(/```[\s\S]*?```|`[^`\n]+`/g)) {
    for (const word of code.split(/[^A-Za-z0-9_-]+/)) if (word !== '') words.add(word);
  }
  return words;
}

/** The `### …` headings of a Markdown text, as written. */
function headings(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^### (.+)$/gm)].map((m) => m[1]!.trim()));
}

/** Property names of a JSON schema, through nested objects, arrays and combinators. */
function propertyNames(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) propertyNames(item, into);
    return into;
  }
  if (!isObject(schema)) return into;
  if (isObject(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      into.add(name);
      propertyNames(property, into);
    }
  }
  for (const key of ['items', 'prefixItems', 'additionalProperties', 'allOf', 'oneOf', 'anyOf', 'not']) {
    if (key in schema) propertyNames(schema[key], into);
  }
  return into;
}

/** Every `enum` and `const` string of a schema and the schemas inside it. */
function enumValues(schema: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) {
    for (const item of schema) enumValues(item, into);
  } else if (isObject(schema)) {
    if (Array.isArray(schema.enum)) for (const v of schema.enum) if (typeof v === 'string') into.add(v);
    if (typeof schema.const === 'string') into.add(schema.const);
    for (const value of Object.values(schema)) enumValues(value, into);
  }
  return into;
}

/** Everything `visit` collects from each object of a JSON document. */
function collect(document: unknown, visit: (object: Json, into: Set<string>) => void): Set<string> {
  const into = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (isObject(node)) {
      visit(node, into);
      Object.values(node).forEach(walk);
    }
  };
  walk(document);
  return into;
}

/** The names of `wanted` that `present` lacks, sorted. */
const missing = (wanted: Iterable<string>, present: Set<string>) =>
  [...new Set(wanted)].filter((name) => !present.has(name)).sort();

t.test(`${API_DOC} covers the OpenAPI document`, async (t) => {
  const words = codeWords(apiDoc);
  const sections = headings(apiDoc);

  const operations = Object.entries(openapi.paths).flatMap(([route, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${route}`),
  );
  t.ok(operations.length >= 10, `the document has its operations (${operations.length})`);
  t.same(missing(operations, sections), [], 'every operation has its level-3 heading "METHOD path"');

  const parameters = Object.values(openapi.paths).flatMap((methods) =>
    Object.values(methods).flatMap((op) => (op.parameters ?? []).map((p) => p.name)),
  );
  t.same(missing(parameters, words), [], 'every parameter is named');

  const schemas = Object.entries(openapi.components.schemas);
  t.ok(schemas.length >= 20, `the document has its component schemas (${schemas.length})`);
  for (const [id, schema] of schemas) {
    t.same(missing(propertyNames(schema), words), [], `every property of ${id} is named`);
  }

  const errorEnums = collect(openapi, (object, into) => {
    if (isObject(object.properties) && 'error' in object.properties)
      enumValues(object.properties.error, into);
  });
  const codes = [...Object.keys(ERROR_TABLE), ...errorEnums];
  t.same(missing(codes, words), [], 'every error code is named');

  const headers = collect(openapi, (object, into) => {
    if (isObject(object.headers)) for (const name of Object.keys(object.headers)) into.add(name);
  });
  t.ok(headers.has('X-Request-ID') && headers.has('Retry-After'), 'the document declares response headers');
  t.same(missing(headers, words), [], 'every response header is named');

  const tools = TOOLS.map((op) => op.id);
  t.same(missing(tools, words), [], 'every MCP tool is named');
});

t.test(`${API_DOC} gives each error code its status`, async (t) => {
  const errors = apiDoc.slice(apiDoc.indexOf('\n## Errors\n'), apiDoc.indexOf('\n## Headers\n'));
  t.ok(errors.length > 0, `${API_DOC} has "## Errors" followed by "## Headers"`);
  const rows = [...errors.matchAll(/^\| (\d{3}) \| `([a-z_]+)` \|/gm)].map((m) => `${m[2]} ${m[1]}`);
  const expected = (Object.keys(ERROR_TABLE) as ErrorCode[]).map(
    (code) => `${code} ${ERROR_TABLE[code].status}`,
  );
  t.same(missing(expected, new Set(rows)), [], 'a "| status | `code` |" row for every code of ERROR_TABLE');
  const known = new Set(expected);
  t.same(
    rows.filter((row) => !known.has(row)),
    [],
    'no row with a code or status the code does not have',
  );
});

/** File names of product notes that lived outside the repository (spelled so this file does not match). */
const OUTSIDE_NOTES = ['SPEC', 'ARCHITECTURE', 'NOTES', 'STYLE'].map((name) => `${name}.md`);
/** Files that record history and may name them. */
const MAY_NAME_THEM = new Set(['CHANGELOG.md', 'docs/performance-log.md']);

const notGit = !fs.existsSync(path.join(root, '.git')) && 'not a git checkout: no list of tracked files';

/** The tracked text files of the repository and their lines (binary files left out). */
function trackedTextFiles(): Array<{ file: string; lines: string[] }> {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
  const out: Array<{ file: string; lines: string[] }> = [];
  for (const file of files) {
    const full = path.join(root, file);
    if (file === '' || !fs.statSync(full, { throwIfNoEntry: false })?.isFile()) continue;
    const bytes = fs.readFileSync(full);
    if (!bytes.includes(0)) out.push({ file, lines: bytes.toString('utf8').split('\n') }); // 0: screenshots
  }
  return out;
}

t.test('no tracked file cites notes kept outside the repository', { skip: notGit }, async (t) => {
  const files = trackedTextFiles().filter(({ file }) => !MAY_NAME_THEM.has(file));
  t.ok(files.length > 100, `git ls-files lists the repository (${files.length} text files)`);
  const citations: string[] = [];
  for (const { file, lines } of files) {
    lines.forEach((line, i) => {
      if (OUTSIDE_NOTES.some((name) => line.includes(name)))
        citations.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`);
    });
  }
  t.same(citations, [], `no citation of ${OUTSIDE_NOTES.join(', ')}: cite docs/api.md or docs/decisions`);
});

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^a-z0-9 _-]/g, '')
    .replace(/ /g, '-');

t.test(`every ${API_DOC}#anchor cited in the repository is a heading there`, { skip: notGit }, async (t) => {
  const anchors = new Set([...apiDoc.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!.trim())));
  t.ok(anchors.has('errors') && anchors.has('get-v1ipip'), 'headings give the anchors GitHub gives');
  const broken: string[] = [];
  for (const { file, lines } of trackedTextFiles()) {
    // Within the page a link is `](#…)`; elsewhere the page's file name, `#` and the anchor.
    const cite = file === API_DOC ? /\]\(#([A-Za-z0-9_-]+)\)/g : /\bapi\.md#([A-Za-z0-9_-]+)/g;
    lines.forEach((line, i) => {
      for (const [, anchor] of line.matchAll(cite)) {
        if (!anchors.has(anchor!)) broken.push(`${file}:${i + 1}: #${anchor}`);
      }
    });
  }
  t.same(broken, [], `every cited anchor is one of ${API_DOC}'s headings`);
});
