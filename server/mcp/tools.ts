/**
 * The MCP tools (SPEC.md "MCP server: POST /mcp"): the operations of the table that are tools
 * (shared/operations.ts), each answering the same JSON as its REST endpoint, as structured content
 * and as text, through the same call envelope (server/call/envelope.ts). A refused call is a tool
 * error whose text is exactly `Error executing tool <tool>: <error code>: <message>`.
 *
 * The SDK would validate the arguments against the input schema before our handler runs, with its
 * own text and before any key check; so the schema handed to the SDK only *advertises* the zod
 * schema (tools/list shows it) and lets every value through, and the envelope validates after the
 * key check, answering with the codes of the Errors table.
 */
import type { CallToolResult, McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ApiError } from '../../shared/errors.js';
import { TOOLS, argumentSchema, operationById, type Operation } from '../../shared/operations.js';
import type { KeyPrincipal } from '../../accounts/index.js';
import { isPending, type CallOutcome, type Envelope } from '../call/envelope.js';
import { jsonText } from '../encoding/json.js';

export const TOOL_NAMES = TOOLS.map((op) => op.id);
export type ToolName = string;

/** What the HTTP layer learned about the caller of one POST /mcp, and what the call sends back. */
export interface CallContext {
  /** The key's principal, or null when the key is missing or refused. */
  principal: KeyPrincipal | null;
  /** Why the key was refused (missing, mistyped, revoked, expired, in the URL). */
  keyRefusal: ApiError | null;
  /** Response headers the call adds (limit headers, Retry-After). */
  headers: Record<string, string>;
}

export interface ToolDeps {
  envelope: Envelope;
}

/**
 * What the SDK sees as the input schema: the zod schema's JSON Schema for tools/list, and a
 * validation that accepts everything (the envelope validates after the key check).
 */
function advertised(schema: z.ZodObject): StandardSchemaWithJSON<Record<string, unknown>> {
  const input = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  delete input.$schema;
  return {
    '~standard': {
      version: 1,
      vendor: 'ipscope',
      validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: () => input, output: () => input },
    },
  };
}

/** The text of a refused call (SPEC.md): `Error executing tool <tool>: <error code>: <message>`. */
export function refusalText(tool: string, code: string, message: string): string {
  return `Error executing tool ${tool}: ${code}: ${message}`;
}

/** The SDK-path result of an outcome (the envelope's answer carries the object). */
function toolResult(op: Operation, outcome: CallOutcome): CallToolResult {
  if (outcome.answer !== null) {
    return {
      content: [{ type: 'text', text: jsonText(outcome.answer.json) }],
      structuredContent: outcome.answer.value as Record<string, unknown>,
    };
  }
  const { code, message } = outcome.refusal!;
  return { content: [{ type: 'text', text: refusalText(op.id, code, message) }], isError: true };
}

/** Runs one tool call for the caller described by `call` (the headers it adds go into `call`). */
export async function callTool(
  deps: ToolDeps,
  tool: string,
  rawArgs: unknown,
  call: CallContext | undefined,
): Promise<CallToolResult> {
  const op = operationById(tool)!;
  const caller =
    call?.principal != null
      ? { principal: call.principal }
      : { principal: null, refusal: call?.keyRefusal ?? new ApiError('unauthorized') };
  const pending = deps.envelope.call(op, caller, { from: 'tool', args: rawArgs }, { withValue: true });
  const outcome = (isPending(pending) ? await pending : pending)!;
  await outcome.settled;
  if (call) Object.assign(call.headers, outcome.headers);
  return toolResult(op, outcome);
}

/** The schemas tools/list shows, converted once (a conversion per server instance is costly). */
const ADVERTISED = new Map(TOOLS.map((op) => [op.id, advertised(argumentSchema(op))]));

/** Registers the tools on `server`; each reads its CallContext from the request's authInfo. */
export function registerTools(server: McpServer, deps: ToolDeps): void {
  for (const op of TOOLS) {
    server.registerTool(
      op.id,
      {
        title: op.title,
        description: `${op.description} Returns the same JSON as GET ${op.path}.`,
        inputSchema: ADVERTISED.get(op.id)!,
        annotations: {
          title: op.title,
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      (args, ctx) => callTool(deps, op.id, args, callContextOf(ctx.http?.authInfo?.extra)),
    );
  }
}

const CALL_CONTEXT = 'ipscopeCall';

/** How the HTTP layer hands a CallContext to the tools: inside the SDK's authInfo. */
export function authInfoFor(call: CallContext) {
  return { token: '', clientId: call.principal?.keyId ?? '', scopes: [], extra: { [CALL_CONTEXT]: call } };
}

function callContextOf(extra: Record<string, unknown> | undefined): CallContext | undefined {
  return extra?.[CALL_CONTEXT] as CallContext | undefined;
}
