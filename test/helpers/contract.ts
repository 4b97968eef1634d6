/**
 * The contract: a response validates against /v1/openapi.json (server/api-docs/openapi.ts) or this throws,
 * naming the request, the status and what does not match. The document's schemas forbid
 * undeclared properties (`additionalProperties: false`), so an extra field fails here too.
 *
 * The response object is found as a client would: the operation of the path template and method
 * (HEAD as GET, without a body), its status or `default`; a path no template matches answers from
 * `components.responses` (404 Not Found, 401 key in the URL, 308 trailing slash, framework
 * refusals); a method the path does not serve, MethodNotAllowed; a CORS preflight, 204.
 *
 * Ajv 8 (draft 2020-12) is the one @seriousme/openapi-schema-validator (a devDependency) brings.
 */
import { createRequire } from 'node:module';
import { buildOpenApiDocument } from '../../server/api-docs/openapi.js';

type Json = Record<string, unknown>;
interface Validate {
  (data: unknown): boolean;
  errors?: unknown;
}
interface AjvLike {
  addSchema(schema: object, key: string): void;
  compile(schema: object): Validate;
  errorsText(errors?: unknown): string;
}

const requireFromValidator = createRequire(
  createRequire(import.meta.url).resolve('@seriousme/openapi-schema-validator'),
);
const Ajv2020 = (requireFromValidator('ajv/dist/2020') as { default: new (options: object) => AjvLike })
  .default;
const addFormats = (requireFromValidator('ajv-formats') as { default: (ajv: AjvLike) => void }).default;

const DOCUMENT = JSON.parse(JSON.stringify(buildOpenApiDocument())) as Json & {
  paths: Record<string, Record<string, Json>>;
  components: { responses: Record<string, Json> };
};
const DOC_ID = 'openapi.json';
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
// References inside the document (`#/components/schemas/…`) resolve against it.
ajv.addSchema({ ...DOCUMENT, $id: DOC_ID }, DOC_ID);

const TEMPLATES = Object.keys(DOCUMENT.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]*')}$`),
}));

export interface ContractResponse {
  method: string;
  /** The request URL or its path with the query string. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** The body as received (empty for HEAD, 204, 308). */
  body: string;
  /** The request carried an Origin header (a CORS preflight is answered 204). */
  origin?: boolean;
}

function resolveRef(object: Json): Json {
  const ref = object.$ref;
  if (typeof ref !== 'string') return object;
  const name = ref.replace('#/components/responses/', '');
  const found = DOCUMENT.components.responses[name];
  if (found === undefined) throw new Error(`contract: unknown response ${ref}`);
  return found;
}

/** The response object of the document that `r` must match, or a reason there is none. */
function responseObjectFor(r: ContractResponse): Json | string {
  // An absolute URL: its path and query (not new URL(): it would rewrite a malformed path).
  const target = r.url.replace(/^https?:\/\/[^/]+/, '');
  const q = target.search(/[?#]/);
  const path = q === -1 ? target : target.slice(0, q);
  const method = (r.method === 'HEAD' ? 'GET' : r.method).toLowerCase();
  const responses = DOCUMENT.components.responses;
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // a malformed escape: matched as sent
  }
  const match =
    TEMPLATES.find((t) => t.pattern.test(path) || t.pattern.test(decoded)) ??
    (r.status === 308 ? TEMPLATES.find((t) => t.pattern.test(path.replace(/\/+$/, ''))) : undefined);
  if (match === undefined) {
    if (r.status === 404) return responses.NotFound!;
    if (r.status === 401) return responses.KeyInUrl!;
    if (r.status === 308) return responses.TrailingSlashRedirect!;
    if (r.status === 403) return responses.ForeignOrigin!;
    if ([400, 408, 431].includes(r.status)) return responses.RequestRefused!;
    return `no path of the document matches ${path} (status ${r.status})`;
  }
  const operation = DOCUMENT.paths[match.template]![method];
  if (operation === undefined) {
    if (r.method === 'OPTIONS' && r.origin && (r.status === 204 || r.status === 403)) {
      return r.status === 204 ? { description: 'CORS preflight' } : responses.ForeignOrigin!;
    }
    if (r.status === 405) return responses.MethodNotAllowed!;
    if (r.status === 308) return responses.TrailingSlashRedirect!;
    if (r.status === 401) return responses.KeyInUrl!;
    if (r.status === 403) return responses.ForeignOrigin!;
    if ([400, 408, 413, 431].includes(r.status)) return responses.RequestRefused!;
    return `${r.method} ${match.template} is not an operation (status ${r.status})`;
  }
  const table = operation.responses as Record<string, Json>;
  const declared = table[String(r.status)] ?? table.default;
  if (declared === undefined) return `${r.method} ${match.template}: status ${r.status} not declared`;
  return resolveRef(declared);
}

function header(r: ContractResponse, name: string): string | undefined {
  const value = r.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Throws unless `r` matches the document; returns nothing. */
export function assertContract(r: ContractResponse): void {
  const label = `${r.method} ${r.url.slice(0, 200)} -> ${r.status}`;
  const object = responseObjectFor(r);
  if (typeof object === 'string') throw new Error(`contract: ${label}: ${object}`);
  for (const [name, spec] of Object.entries((object.headers ?? {}) as Record<string, Json>)) {
    if (spec.required === true && header(r, name) === undefined) {
      throw new Error(`contract: ${label}: header ${name} missing`);
    }
  }
  const content = object.content as Record<string, { schema: object }> | undefined;
  if (r.method === 'HEAD' || content === undefined) {
    if (r.body !== '') throw new Error(`contract: ${label}: a body where none is declared`);
    return;
  }
  const type = (header(r, 'content-type') ?? '').split(';')[0]!.trim();
  const media = content[type];
  if (media === undefined) {
    throw new Error(
      `contract: ${label}: content type ${type} not declared (${Object.keys(content).join(', ')})`,
    );
  }
  let data: unknown = r.body;
  if (type === 'application/json') {
    try {
      data = JSON.parse(r.body);
    } catch {
      throw new Error(`contract: ${label}: not JSON: ${r.body.slice(0, 200)}`);
    }
  }
  const validate = validatorFor(media.schema);
  if (!validate(data)) {
    throw new Error(`contract: ${label}: ${ajv.errorsText(validate.errors)}: ${r.body.slice(0, 300)}`);
  }
}

const VALIDATORS = new Map<object, Validate>();

/** Compiled once per schema of the document. */
function validatorFor(schema: object): Validate {
  let validate = VALIDATORS.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(inScope(schema));
    VALIDATORS.set(schema, validate);
  }
  return validate;
}

/** A schema whose `#/components/…` references point into the document. */
function inScope(schema: object): Json {
  return JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, `"${DOC_ID}#/components/`)) as Json;
}
