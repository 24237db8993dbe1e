import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { mapStrings } from '../../core/orchestrator/session-detail.js';
import { advertisedOutputSchema, toolJsonSchema } from './json-schema.js';
import { toolErrorResult } from './tool-errors.js';
import type { AnyMcpTool, ToolOrchestrator } from './tool.js';
import { MCP_TOOLS } from './tools.js';

/** How tool calls reach the orchestrator: `use` runs a call on a connected client. */
export interface OrchestratorAccess {
  use<T>(call: (orchestrator: ToolOrchestrator) => Promise<T>): Promise<T>;
}

export interface McpServerOptions {
  orchestrator: OrchestratorAccess;
  /** The package version announced in the handshake. */
  version: string;
  /** Redacts every string that leaves: results, error messages, log lines. */
  redact: (text: string) => string;
  /** The local log (stderr): details of unexpected failures; every line passes through `redact` before it is given here. */
  log: (line: string) => void;
  /** Default: {@link MCP_TOOLS}. */
  tools?: readonly AnyMcpTool[];
  /** Called after a successful tool call with the sessions it created or named (elicitation follows them). */
  onSessions?: (sessionIds: string[]) => void;
}

const INSTRUCTIONS =
  'One Works runs coding-agent sessions (droid, Claude Code, Codex, Gemini CLI and other ACP agents, process runners) in approved workspaces, each in its own sandbox, under one orchestrator with limits and queues. ' +
  'Start with list_workspaces, then create_session; follow with wait_for_sessions and read_session; send_message continues or steers a session. ' +
  'Pass a requestKey to create_session and send_message so that a retried call never runs twice.';

/**
 * An MCP server (the SDK's low-level `Server`) with the One Works tools. The low-level server
 * rather than McpServer: input validation failures must come back as structured `usage` tool
 * errors like every other refusal, which McpServer's private error path does not allow. Input
 * is parsed with each tool's strict schema; results are parsed with its output schema (which
 * strips undocumented fields), redacted, and sent as structuredContent plus a short text.
 * The caller connects it to a transport and closes it.
 */
export function createMcpServer(options: McpServerOptions): Server {
  const tools = options.tools ?? MCP_TOOLS;
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const listed = listingOf(tools);
  const server = new Server({ name: 'one-works', version: options.version }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${request.params.name}"; tools/list names the tools`);
    return callTool(tool, request.params.arguments ?? {}, options);
  });
  return server;
}

// The tools/list entries (with their JSON Schemas) of a tool set, built once per set: the HTTP
// server makes an MCP server per request, and the schemas never change.
const LISTINGS = new WeakMap<readonly AnyMcpTool[], Tool[]>();

function listingOf(tools: readonly AnyMcpTool[]): Tool[] {
  let listed = LISTINGS.get(tools);
  if (!listed) {
    listed = tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: toolJsonSchema(tool.input, 'input'),
      outputSchema: advertisedOutputSchema(tool.output),
      annotations: { readOnlyHint: tool.readOnly, destructiveHint: false, openWorldHint: false },
    }));
    LISTINGS.set(tools, listed);
  }
  return listed;
}

// Built at module load for the default tools.
listingOf(MCP_TOOLS);

async function callTool(tool: AnyMcpTool, args: unknown, options: McpServerOptions): Promise<CallToolResult> {
  const fail = (error: unknown): CallToolResult =>
    toolErrorResult(error, options.redact, (line) => options.log(options.redact(`${tool.name}: ${line}`)));
  const parsed = tool.input.safeParse(args);
  if (!parsed.success)
    return fail(new OneWorksError(ERROR_CODES.USAGE, `invalid arguments for ${tool.name}: ${z.prettifyError(parsed.error)}`));
  try {
    const { result, text } = await options.orchestrator.use((orchestrator) => tool.run(orchestrator, parsed.data));
    const structured = tool.output.parse(result) as Record<string, unknown>;
    options.onSessions?.(sessionsOf(parsed.data, structured));
    return { content: [{ type: 'text', text: options.redact(text) }], structuredContent: mapStrings(structured, options.redact) };
  } catch (error) {
    return fail(error);
  }
}

// The sessions a tool call created or named: its `session`/`sessions` arguments, its result's `sessionId`.
function sessionsOf(args: unknown, result: Record<string, unknown>): string[] {
  const { session, sessions } = args as { session?: unknown; sessions?: unknown };
  const ids = [session, ...(Array.isArray(sessions) ? sessions : []), result.sessionId];
  return ids.filter((id): id is string => typeof id === 'string');
}
