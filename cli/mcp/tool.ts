import type { z } from 'zod';
import type { OrchestratorApi, WorktreeApi } from '../../core/orchestrator/index.js';

/**
 * What the tools call: the orchestrator's request/response methods (no live subscription).
 * The control-socket client (cli/daemon/client.ts) and the in-process orchestrator both satisfy it.
 */
export type ToolOrchestrator = Pick<
  OrchestratorApi,
  | 'createSession'
  | 'sendMessage'
  | 'forkSession'
  | 'cancel'
  | 'status'
  | 'list'
  | 'corruptSessions'
  | 'wait'
  | 'updateSession'
  | 'readSession'
  | 'usage'
  | 'info'
  | 'models'
  | 'listAsks'
  | 'answerAsk'
> &
  WorktreeApi;

/** What a tool returns: the structured result (checked and stripped by its output schema) and a short text. */
export interface ToolReturn<O> {
  result: O;
  text: string;
}

/**
 * One MCP tool: a strict input schema, an output schema, and a body that calls the orchestrator.
 * The body throws OneWorksErrors for refused calls; the server turns them into `isError` results.
 */
export interface McpTool<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  /** What the tool does, for the assistant choosing a tool (first sentence is the summary). */
  description: string;
  input: I;
  output: O;
  /** No side effect on sessions (MCP `readOnlyHint`). */
  readOnly: boolean;
  run(orchestrator: ToolOrchestrator, args: z.output<I>): Promise<ToolReturn<z.input<O>>>;
}

/** A tool with its argument types erased, as the registry holds it. */
export interface AnyMcpTool {
  name: string;
  description: string;
  input: z.ZodObject;
  output: z.ZodObject;
  readOnly: boolean;
  run(orchestrator: ToolOrchestrator, args: unknown): Promise<ToolReturn<unknown>>;
}

/** Declares a tool, checking its body against its schemas, and erases its types for the registry. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(tool: McpTool<I, O>): AnyMcpTool {
  return tool as unknown as AnyMcpTool;
}
