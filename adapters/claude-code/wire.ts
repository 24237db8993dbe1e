import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';

/**
 * What Claude Code prints on stdout with `-p --output-format stream-json --verbose` (2.1.333),
 * one JSON object a line, and what One Works writes to its stdin. Lenient (loose objects): the
 * CLI adds fields between versions; only what One Works reads is declared.
 */

const ContentBlockSchema = lazySchema(() =>
  z.looseObject({
    type: z.string(),
    text: z.string().optional(),
    thinking: z.string().optional(),
    id: z.string().optional(),
    name: z.string().optional(),
    input: z.unknown().optional(),
    tool_use_id: z.string().optional(),
    content: z.unknown().optional(),
    is_error: z.boolean().optional(),
  }),
);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

export const ResultUsageSchema = lazySchema(() =>
  z.looseObject({
    input_tokens: z.number().optional(),
    output_tokens: z.number().optional(),
    cache_read_input_tokens: z.number().optional(),
    cache_creation_input_tokens: z.number().optional(),
  }),
);

export const SystemMessageSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('system'),
    subtype: z.string(),
    session_id: z.string().optional(),
    uuid: z.string().optional(),
    claude_code_version: z.string().optional(),
    model: z.string().optional(),
    permissionMode: z.string().optional(),
    status: z.string().nullable().optional(),
    hook_id: z.string().optional(),
    hook_event: z.string().optional(),
    outcome: z.string().optional(),
  }),
);

export const AssistantMessageSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('assistant'),
    uuid: z.string().optional(),
    parent_tool_use_id: z.string().nullable().optional(),
    message: z.looseObject({ id: z.string().optional(), content: z.array(ContentBlockSchema).default([]) }),
  }),
);

export const UserMessageSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('user'),
    uuid: z.string().optional(),
    parent_tool_use_id: z.string().nullable().optional(),
    message: z.looseObject({ content: z.union([z.string(), z.array(ContentBlockSchema)]).optional() }),
  }),
);

export const StreamEventSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('stream_event'),
    uuid: z.string().optional(),
    parent_tool_use_id: z.string().nullable().optional(),
    event: z.looseObject({
      type: z.string(),
      index: z.number().optional(),
      message: z.looseObject({ id: z.string().optional() }).optional(),
      delta: z.looseObject({ type: z.string().optional(), text: z.string().optional(), thinking: z.string().optional() }).optional(),
    }),
  }),
);

export const ResultMessageSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('result'),
    subtype: z.string(),
    is_error: z.boolean().optional(),
    result: z.string().optional(),
    num_turns: z.number().optional(),
    session_id: z.string().optional(),
    total_cost_usd: z.number().optional(),
    stop_reason: z.string().nullable().optional(),
    usage: ResultUsageSchema.optional(),
    errors: z.array(z.unknown()).optional(),
  }),
);
export type ResultMessage = z.infer<typeof ResultMessageSchema>;

export const CanUseToolSchema = lazySchema(() =>
  z.looseObject({
    subtype: z.literal('can_use_tool'),
    tool_name: z.string(),
    input: z.record(z.string(), z.unknown()).default({}),
    tool_use_id: z.string().optional(),
    description: z.string().optional(),
    blocked_path: z.string().optional(),
  }),
);
export type CanUseTool = z.infer<typeof CanUseToolSchema>;

export const ControlRequestSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('control_request'),
    request_id: z.string(),
    request: z.looseObject({ subtype: z.string() }),
  }),
);

export const ControlResponseSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('control_response'),
    response: z.looseObject({
      subtype: z.string(),
      request_id: z.string(),
      response: z.unknown().optional(),
      error: z.string().optional(),
    }),
  }),
);

export const ControlCancelSchema = lazySchema(() => z.looseObject({ type: z.literal('control_cancel_request'), request_id: z.string() }));

/** Every stdout line One Works reads; anything else is kept as a `native` event. */
export const StdoutMessageSchema = lazySchema(() =>
  z.discriminatedUnion('type', [
    SystemMessageSchema,
    AssistantMessageSchema,
    UserMessageSchema,
    StreamEventSchema,
    ResultMessageSchema,
    ControlRequestSchema,
    ControlResponseSchema,
    ControlCancelSchema,
  ]),
);
export type StdoutMessage = z.infer<typeof StdoutMessageSchema>;

/** The control request subtypes One Works sends (2.1.333). */
export const CONTROL = {
  initialize: 'initialize',
  interrupt: 'interrupt',
  setModel: 'set_model',
  setPermissionMode: 'set_permission_mode',
  getSettings: 'get_settings',
  canUseTool: 'can_use_tool',
} as const;

/** A user turn on stdin. */
export function userMessage(text: string): unknown {
  return { type: 'user', session_id: '', parent_tool_use_id: null, message: { role: 'user', content: [{ type: 'text', text }] } };
}

/** A control request on stdin. */
export function controlRequest(requestId: string, request: Record<string, unknown>): unknown {
  return { type: 'control_request', request_id: requestId, request };
}

/** The answer to one of the CLI's control requests. */
export function controlSuccess(requestId: string, response: unknown): unknown {
  return { type: 'control_response', response: { subtype: 'success', request_id: requestId, response } };
}
