import { z } from 'zod';
import { CatalogModelSchema } from '../../core/catalog/index.js';
import { AutonomySchema as StoredAutonomySchema, RunStatusSchema, SessionStatusSchema } from '../../core/store/records.js';

/**
 * Output shapes of the MCP tools: plain `z.object`s, so that parsing a value the orchestrator
 * returned both checks it and strips every field the tool does not document (a field added to
 * the orchestrator later never leaks unreviewed). Their JSON Schema (draft-7, output mode) is
 * what `tools/list` advertises and what docs/TOOLS.md shows.
 */

/** The store's autonomy levels, described for assistants. */
export const AutonomySchema = StoredAutonomySchema.describe('how much the agent may do without asking: off | low | medium | high');

export const UsageOutSchema = z.object({
  reported: z.boolean().describe('false when the agent reported no usage (never zeros that look free)'),
  inputTokens: z.number().int().optional(),
  outputTokens: z.number().int().optional(),
  cacheReadTokens: z.number().int().optional(),
  cacheCreationTokens: z.number().int().optional(),
  thinkingTokens: z.number().int().optional(),
});

export const SettingsOutSchema = z.object({
  model: z.string().optional(),
  effort: z.string().optional(),
  autonomy: AutonomySchema,
});

export const SessionSummaryOutSchema = z.object({
  sessionId: z.string().describe("the One Works session id (never the agent's native id)"),
  adapter: z.string(),
  workspace: z.string(),
  title: z.string().optional(),
  labels: z.array(z.string()).optional(),
  archived: z.boolean().optional(),
  imported: z.boolean().optional().describe("true for a session read from an agent CLI's own records by `one-works import`"),
  createdAt: z.string(),
  updatedAt: z.string(),
  state: SessionStatusSchema.describe('working: a turn is live; every other state is settled'),
  queueDepth: z.number().int(),
  latestRun: z
    .object({
      runId: z.string(),
      status: RunStatusSchema,
      reason: z.string().optional(),
      mode: z
        .string()
        .optional()
        .describe(
          'how the agent ran the turn, for adapters with more than one way (droid: stream-jsonrpc, or oneshot after its live protocol failed)',
        ),
    })
    .optional(),
  attention: z.array(z.string()).optional().describe('why the session needs attention'),
  worktree: z
    .object({
      repository: z.string().describe("the user's repository the worktree belongs to"),
      path: z.string().describe('the worktree the session works in'),
      branch: z.string().describe("the session's branch"),
      baseRef: z.string().describe('the base as named (or the branch HEAD was on)'),
      baseCommit: z.string(),
      state: z.enum(['live', 'merged', 'discarded']).describe('live: never merged; merged: merged at least once; discarded: removed'),
      mergedInto: z.array(z.string()).describe('branches it was merged into, in order'),
      discarded: z.boolean(),
    })
    .optional()
    .describe('a worktree session only (see diff_session, merge_session, discard_session)'),
});

export const TurnHandleOutSchema = z.object({
  sessionId: z.string(),
  runId: z.string(),
  state: z.enum(['queued', 'running']),
  settings: SettingsOutSchema.describe('the effective model, effort and autonomy of this turn, resolved at acceptance'),
});

export const RunViewOutSchema = z.object({
  runId: z.string(),
  status: RunStatusSchema,
  reason: z.string().optional(),
  prompt: z.string(),
  settings: SettingsOutSchema,
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  text: z.string().optional().describe('the committed assistant text'),
  usage: UsageOutSchema.optional(),
  mode: z.string().optional().describe('how the agent ran the turn (droid: stream-jsonrpc, or oneshot after its live protocol failed)'),
  truncated: z.boolean().optional().describe('true when prompt or text was cut to fit the read (each ends with "… [N chars cut]")'),
});

/** A recorded event without its native-derived key; the members are those of core/events. */
export const EventOutSchema = z.looseObject({
  type: z.string(),
  seq: z.number().int(),
  at: z.string(),
});

export const WaitOutSchema = z.object({
  settled: z.array(SessionSummaryOutSchema).describe('sessions with no live turn (any state but working)'),
  pending: z.array(SessionSummaryOutSchema).describe('sessions still working when the wait ended'),
  timedOut: z.boolean().describe('true when the wait ended on its timeout; not a failure'),
});

/** The catalog's model shape (a plain object, so undocumented fields are stripped), described for assistants. */
export const CatalogModelOutSchema = z.object(CatalogModelSchema.shape).extend({
  id: CatalogModelSchema.shape.id.describe('the id to pass as `model`'),
  efforts: CatalogModelSchema.shape.efforts.describe('reasoning efforts the model accepts; empty when unknown'),
});

/** The structured content of every failed tool call (`isError: true`). */
export const ToolErrorOutSchema = z.object({
  error: z.object({
    code: z.string().describe('a stable One Works error code, e.g. workspace_not_approved'),
    message: z.string(),
    retryable: z.boolean().describe('true when the same call may succeed later unchanged'),
    action: z.string().describe('what to do about it'),
  }),
});
export type ToolErrorOut = z.infer<typeof ToolErrorOutSchema>;
