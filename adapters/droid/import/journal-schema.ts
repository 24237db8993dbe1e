import { z } from 'zod';
import { lazySchema } from '../../../core/lazy-schema.js';

/**
 * The lines of droid's own session journal (`~/.factory/sessions/<cwd-slug>/<id>.jsonl`), as
 * observed with droid 0.225.2 (droid-protocol.md §11, the observed wire protocol). Lenient about members
 * (versions drift: unknown members are kept, never dropped), strict about the shape that makes a
 * line a journal line: a `type`, and for the types we map, their identifying fields.
 */

const Loose = lazySchema(() => z.looseObject({}));

/** `session_start`: the first line, rewritten in place when the title or cwd changes. */
export const SessionStartLineSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('session_start'),
    /** The current field for the native id (absent in 0.225.2, which writes `id`). */
    sessionId: z.string().min(1).optional(),
    /** The legacy field; the only id in 0.225.2 journals. */
    id: z.string().min(1).optional(),
    title: z.string().optional(),
    cwd: z.string().min(1),
    /** Set on forks and compactions: the source session. */
    parent: z.string().optional(),
    /** Set on worker sessions started by another session's tool call. */
    callingSessionId: z.string().optional(),
    callingToolUseId: z.string().optional(),
  }),
);
export type SessionStartLine = z.infer<typeof SessionStartLineSchema>;

const ContentBlockSchema = lazySchema(() => z.looseObject({ type: z.string() }));

/** `message`: one user or assistant message; tool results are user messages. */
export const MessageLineSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('message'),
    id: z.string().min(1),
    parentId: z.string().optional(),
    timestamp: z.string().optional(),
    message: z.looseObject({
      role: z.string(),
      content: z.union([z.string(), z.array(ContentBlockSchema)]),
      modelId: z.string().optional(),
      visibility: z.string().optional(),
      usage: Loose.optional(),
    }),
  }),
);
export type MessageLine = z.infer<typeof MessageLineSchema>;

/** `agent_turn_outcome`: how the turn begun by the user message `turnId` ended. */
export const TurnOutcomeLineSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('agent_turn_outcome'),
    turnId: z.string().min(1),
    reason: z.string(),
  }),
);
export type TurnOutcomeLine = z.infer<typeof TurnOutcomeLineSchema>;

/** Any other journal line: it must at least say what it is. */
export const OtherLineSchema = lazySchema(() => z.looseObject({ type: z.string().min(1) }));

export const ToolUseBlockSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('tool_use'),
    id: z.string().min(1),
    name: z.string().min(1),
    input: z.unknown(),
  }),
);
export const ToolResultBlockSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('tool_result'),
    tool_use_id: z.string().min(1),
    is_error: z.boolean().optional(),
    content: z.unknown(),
  }),
);
export const TextBlockSchema = lazySchema(() => z.looseObject({ type: z.literal('text'), text: z.string() }));
export const ThinkingBlockSchema = lazySchema(() => z.looseObject({ type: z.literal('thinking'), thinking: z.string() }));

/** Usage as a message reports it (Anthropic-style names); placeholder zeros are not usage. */
export const MessageUsageSchema = lazySchema(() =>
  z.looseObject({
    input_tokens: z.number().int().nonnegative().optional(),
    output_tokens: z.number().int().nonnegative().optional(),
    inputTokens: z.number().int().nonnegative().optional(),
    outputTokens: z.number().int().nonnegative().optional(),
    cache_read_input_tokens: z.number().int().nonnegative().optional(),
    cacheReadTokens: z.number().int().nonnegative().optional(),
  }),
);
