/**
 * The MCP tools as the SDK serves them (sdk.ts): the operations of the table that are tools
 * (shared/operations.ts), each answering the same JSON as its REST endpoint, as structured content
 * and as text, through the same call envelope (server/call/envelope.ts). A refused call is a tool
 * error whose text is exactly `Error executing tool <tool>: <error code>: <message>`.
 *
 * The SDK validates a call's arguments against the tool's input schema, which is the operation
 * table's argument schema (argumentSchema): tools/list shows it, and a value of the wrong type is
 * the SDK's own invalid-arguments error. The plain calls every client sends do not reach the SDK:
 * the fast call (fast-call.ts) runs them through the envelope, which checks the key before the
 * arguments and answers their refusals with the codes of the error table.
 */
import type { CallToolResult, McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { TOOLS, type Operation } from '../../shared/operations.js';
import { argumentSchema } from '../../shared/arguments.js';
import { jsonText } from '../encoding/json.js';
import type { CallResult, Envelope } from '../call/envelope.js';
import { bearerToken } from '../call/keys.js';
import type { McpRequest } from './exchange.js';
import { refusalText } from './fast-call.js';

/** The exchange a tool call of the SDK belongs to, and the headers its calls send back. */
export interface ToolCaller {
  request: McpRequest;
  /** Response headers the calls add (limit headers, Retry-After). */
  headers: Record<string, string>;
}

/**
 * The input schema handed to the SDK: the zod schema's own validation, and its JSON Schema (draft
 * 2020-12, input side) for tools/list, converted once.
 */
function inputSchema(schema: z.ZodObject): StandardSchemaWithJSON<Record<string, unknown>> {
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  delete json.$schema;
  const standard = schema['~standard'];
  return {
    '~standard': {
      version: 1,
      vendor: standard.vendor,
      validate: standard.validate as StandardSchemaWithJSON<Record<string, unknown>>['~standard']['validate'],
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}

/** The schemas of the tools, converted once (a conversion per server instance is costly). */
const INPUT_SCHEMAS = new Map(TOOLS.map((op) => [op.id, inputSchema(argumentSchema(op))]));

/** The SDK's result of a call's result (the envelope's answer carries the response object). */
function toolResult(op: Operation, result: CallResult): CallToolResult {
  if (result.answer !== null) {
    return {
      content: [{ type: 'text', text: jsonText(result.answer.json) }],
      structuredContent: result.answer.value as Record<string, unknown>,
    };
  }
  const { code, message } = result.refusal!;
  return { content: [{ type: 'text', text: refusalText(op.id, code, message) }], isError: true };
}

/** Runs one tool call for `caller` (the headers it adds go into `caller.headers`). */
function callTool(
  envelope: Envelope,
  op: Operation,
  args: unknown,
  caller: ToolCaller,
): Promise<CallToolResult> {
  const request = caller.request;
  return new Promise((resolve) =>
    envelope.call(
      {
        op,
        credential: { token: bearerToken(request.headers.authorization), keyInUrl: request.keyInUrl },
        client: request,
        args: { from: 'tool', args },
        withValue: true,
      },
      {
        result(result) {
          Object.assign(caller.headers, result.headers);
          resolve(toolResult(op, result));
        },
      },
    ),
  );
}

const CALLER = 'ipscopeCaller';

/** How an exchange hands its ToolCaller to the tools: inside the SDK's authInfo. */
export function authInfoFor(caller: ToolCaller) {
  return { token: '', clientId: '', scopes: [], extra: { [CALLER]: caller } };
}

/** Registers the tools on `server`; each reads its ToolCaller from the request's authInfo. */
export function registerTools(server: McpServer, envelope: Envelope): void {
  for (const op of TOOLS) {
    server.registerTool(
      op.id,
      {
        title: op.title,
        description: `${op.description} Returns the same JSON as GET ${op.path}.`,
        inputSchema: INPUT_SCHEMAS.get(op.id)!,
        annotations: {
          title: op.title,
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      (args, ctx) => {
        const caller = ctx.http?.authInfo?.extra?.[CALLER] as ToolCaller | undefined;
        if (caller === undefined) throw new Error('a tool call without its exchange');
        return callTool(envelope, op, args, caller);
      },
    );
  }
}
