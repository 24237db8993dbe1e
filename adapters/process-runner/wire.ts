import { z } from 'zod';

/**
 * RunnerFrame: the NDJSON protocol between One Works and a process runner (a harness: any model
 * loop in any language). One JSON object a line, each line at most {@link MAX_LINE_BYTES};
 * stdout carries frames only. Decoding is strict: an unknown field is a protocol error. The
 * JSON Schema next to this file (`runner-frame.schema.json`, see `runnerFrameJsonSchema`) is the
 * same schema for runners written in other languages; docs/process-runner.md is the prose spec.
 */

/** The protocol version this adapter speaks. */
export const RUNNER_PROTOCOL_VERSION = '1.0.0';

/** Longest line either side may write, in bytes (newline excluded). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** Most `tool.call` reverse requests a runner may have open at once. */
export const MAX_CONCURRENT_TOOL_CALLS = 32;

/** The method names, One Works → runner. */
export const METHODS = {
  open: 'open',
  prompt: 'prompt',
  steer: 'steer',
  interrupt: 'interrupt',
  checkpoint: 'checkpoint',
  detach: 'detach',
} as const;

/** The reverse-request method, runner → One Works. */
export const TOOL_CALL = 'tool.call' as const;

const Id = z.string().min(1).max(200);
const Attachment = z.string().min(1).max(200);
const Turn = z.string().min(1).max(200);

export const ToolDefinitionSchema = z.strictObject({
  name: z.string().min(1),
  description: z.string(),
  /** A JSON Schema object describing the tool's arguments. */
  input_schema: z.record(z.string(), z.unknown()),
});
export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;

export const ProviderSchema = z.strictObject({
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
});

export const OpenParamsSchema = z.strictObject({
  session_id: z.string().min(1),
  /** The session's native directory: the runner keeps its state here, and only here. */
  dir: z.string().min(1),
  config: z.strictObject({ model: z.string().optional(), tools: z.array(z.string()) }),
  tools: z.array(ToolDefinitionSchema),
  /** Credentials: the only way credentials reach a runner. */
  provider: ProviderSchema,
});

const Empty = z.strictObject({});
const Text = z.strictObject({ text: z.string() });

/** One Works → runner: requests. `open`, `checkpoint` and `detach` carry no `turn`. */
export const RequestSchema = z.discriminatedUnion('method', [
  z.strictObject({ attachment: Attachment, id: Id, method: z.literal('open'), params: OpenParamsSchema }),
  z.strictObject({ attachment: Attachment, id: Id, turn: Turn, method: z.literal('prompt'), params: Text }),
  z.strictObject({ attachment: Attachment, id: Id, turn: Turn, method: z.literal('steer'), params: Text }),
  z.strictObject({ attachment: Attachment, id: Id, turn: Turn, method: z.literal('interrupt'), params: Empty }),
  z.strictObject({ attachment: Attachment, id: Id, method: z.literal('checkpoint'), params: Empty }),
  z.strictObject({ attachment: Attachment, id: Id, method: z.literal('detach'), params: Empty }),
]);
export type Request = z.infer<typeof RequestSchema>;

/** Result of `open`: whether the runner found earlier state in `dir` (it must not call the model or tools). */
export const OpenResultSchema = z.strictObject({ resumed: z.boolean() });
/** Result of `prompt`, sent when the turn has ended: `interrupted` after an interrupt, else the model's stop reason. */
export const PromptResultSchema = z.strictObject({ stop_reason: z.string().min(1) });
/** Result of `checkpoint`: the runner's files in `dir`, relative paths with exact byte sizes. */
export const CheckpointResultSchema = z.strictObject({
  files: z.array(z.strictObject({ path: z.string().min(1), size: z.number().int().nonnegative() })),
});

export const ErrorCodeSchema = z.enum(['provider_error', 'runner_error']);
export const ReplyErrorSchema = z.strictObject({ code: ErrorCodeSchema, message: z.string() });

/** Runner → One Works: a reply to a request, echoing `attachment`, `id` and (when the request had one) `turn`. */
export const ReplySchema = z.union([
  z.strictObject({ attachment: Attachment, id: Id, turn: Turn.optional(), result: z.unknown() }),
  z.strictObject({ attachment: Attachment, id: Id, turn: Turn.optional(), error: ReplyErrorSchema }),
]);
export type Reply = z.infer<typeof ReplySchema>;

export const UsageSchema = z.strictObject({ input: z.number().int().nonnegative(), output: z.number().int().nonnegative() });

/** Runner → One Works: an event of a running prompt. */
export const EventFrameSchema = z.discriminatedUnion('event', [
  z.strictObject({ attachment: Attachment, turn: Turn, event: z.literal('assistant.delta'), data: Text }),
  z.strictObject({
    attachment: Attachment,
    turn: Turn,
    event: z.literal('assistant.message'),
    data: z.strictObject({ text: z.string(), usage: UsageSchema.optional(), stop_reason: z.string().optional() }),
  }),
]);
export type EventFrame = z.infer<typeof EventFrameSchema>;

/** Runner → One Works: a tool call of a running prompt (a reverse request; One Works answers it). */
export const ToolCallSchema = z.strictObject({
  attachment: Attachment,
  turn: Turn,
  id: Id,
  method: z.literal(TOOL_CALL),
  params: z.strictObject({ id: z.string().min(1), name: z.string().min(1), arguments: z.record(z.string(), z.unknown()) }),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

/** One Works → runner: the answer to a `tool.call`. */
export const ToolResultSchema = z.strictObject({
  attachment: Attachment,
  turn: Turn,
  id: Id,
  result: z.strictObject({ content: z.string(), is_error: z.boolean() }),
});
export type ToolResult = z.infer<typeof ToolResultSchema>;

/** Everything a runner may write on stdout. */
export const RunnerOutputSchema = z.union([EventFrameSchema, ToolCallSchema, ReplySchema]);
/** Everything One Works writes on a runner's stdin. */
export const RunnerInputSchema = z.union([RequestSchema, ToolResultSchema]);

export type RunnerMessage = { kind: 'event'; frame: EventFrame } | { kind: 'tool.call'; frame: ToolCall } | { kind: 'reply'; frame: Reply };

/**
 * Decodes one line a runner wrote: an event frame (has `event`), a tool call (has `method`) or
 * a reply (has `result` or `error`). Returns the zod error's first issue as a sentence when the
 * line does not fit exactly (unknown fields included).
 */
export function decodeRunnerMessage(raw: unknown): { ok: true; message: RunnerMessage } | { ok: false; problem: string } {
  const object = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : undefined;
  if (!object) return { ok: false, problem: 'a frame must be a JSON object' };
  const [kind, schema] =
    'event' in object
      ? (['event', EventFrameSchema] as const)
      : 'method' in object
        ? (['tool.call', ToolCallSchema] as const)
        : (['reply', ReplySchema] as const);
  const parsed = schema.safeParse(object);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
    const keys = issue && 'keys' in issue && Array.isArray(issue.keys) ? ` (${issue.keys.join(', ')})` : '';
    return { ok: false, problem: `invalid ${kind} frame${where}: ${issue?.message ?? 'does not match the schema'}${keys}` };
  }
  return { ok: true, message: { kind, frame: parsed.data } as RunnerMessage };
}

// A JSON Schema of `schema` without its own `$schema` line (it sits under the document's `$defs`).
function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return rest;
}

/** The published JSON Schema of both directions (what `runner-frame.schema.json` holds). */
export function runnerFrameJsonSchema(): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: `RunnerFrame ${RUNNER_PROTOCOL_VERSION}`,
    description: `One Works process-runner protocol: one JSON object a line, at most ${MAX_LINE_BYTES} bytes; unknown fields are errors.`,
    $defs: {
      input: jsonSchemaOf(RunnerInputSchema, 'input'),
      output: jsonSchemaOf(RunnerOutputSchema, 'input'),
      openResult: jsonSchemaOf(OpenResultSchema),
      promptResult: jsonSchemaOf(PromptResultSchema),
      checkpointResult: jsonSchemaOf(CheckpointResultSchema),
    },
  };
}
