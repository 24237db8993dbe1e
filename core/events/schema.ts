import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import { compileQuickCheck, type QuickCheck } from '../schema-check.js';

/**
 * The one event vocabulary every adapter projects into. Adapters produce `EventDraft`s (the
 * type-specific payload plus a `key` derived from native identifiers); the session layer stamps
 * `sessionId`, `seq` and `at`, drops drafts whose key it has already written, and appends the
 * rest to the session's event log. A re-emitted native fact therefore maps to the same key and
 * is written once.
 */

/** Token usage. Usage the agent did not report is `reported: false`, never zeros. */
export const UsageSchema = lazySchema(() =>
  z.object({
    reported: z.boolean(),
    inputTokens: z.number().int().nonnegative().optional(),
    outputTokens: z.number().int().nonnegative().optional(),
    cacheReadTokens: z.number().int().nonnegative().optional(),
    cacheCreationTokens: z.number().int().nonnegative().optional(),
    thinkingTokens: z.number().int().nonnegative().optional(),
    /** Cost in US dollars, when the agent reports one (Claude Code's `total_cost_usd`). */
    costUsd: z.number().nonnegative().optional(),
  }),
);
export type Usage = z.infer<typeof UsageSchema>;
export const UNREPORTED_USAGE: Usage = Object.freeze({ reported: false });

export const TurnStatusSchema = lazySchema(() => z.enum(['completed', 'failed', 'interrupted', 'unknown']));
export type TurnStatus = z.infer<typeof TurnStatusSchema>;

/** How a turn ended. `text` prefers the committed assistant message over the delta stream. */
export const TurnOutcomeSchema = lazySchema(() =>
  z.object({
    status: TurnStatusSchema,
    /** Machine-readable reason: the native reason where there is one (`completed`, `cancelled`, …) or a One Works code. */
    reason: z.string(),
    text: z.string(),
    usage: UsageSchema,
  }),
);
export type TurnOutcome = z.infer<typeof TurnOutcomeSchema>;

export const ToolKindSchema = lazySchema(() => z.enum(['execute', 'read', 'edit', 'search', 'fetch', 'other']));
export type ToolKind = z.infer<typeof ToolKindSchema>;

/** Where a person's answer to an escalated ask came from. */
export const AnswerChannelSchema = lazySchema(() => z.enum(['terminal', 'cli', 'mcp', 'elicitation']));
export type AnswerChannel = z.infer<typeof AnswerChannelSchema>;

// The payload of each event type, built on first use (with the schemas below).
function buildPayloads() {
  const Json = z.unknown();
  return {
    'session.started': {
      adapter: z.string(),
      workspace: z.string(),
      resumed: z.boolean(),
      cliVersion: z.string().optional(),
      /** The version facts the agent announced (keys its adapter defines, as in probes and the lock). */
      versionFacts: z.record(z.string(), z.string()).optional(),
    },
    'session.closed': { reason: z.string() },
    'turn.queued': { runId: z.string(), prompt: z.string() },
    'turn.started': {
      runId: z.string(),
      model: z.string().optional(),
      effort: z.string().optional(),
      autonomy: z.string().optional(),
    },
    'turn.completed': { runId: z.string(), outcome: TurnOutcomeSchema },
    /** A person settled a run whose outcome was unknown (`one-works sessions reconcile`). */
    'run.reconciled': {
      runId: z.string(),
      status: z.enum(['completed', 'failed', 'interrupted']),
      previous: z.object({ status: z.string(), reason: z.string().optional() }),
      note: z.string().optional(),
    },
    /** Live only: streamed to subscribers, never written to the event log. */
    'assistant.delta': { messageId: z.string(), text: z.string(), thinking: z.boolean().optional() },
    'assistant.message': { messageId: z.string(), text: z.string(), thinking: z.string().optional() },
    /** One span per native tool-use id: `phase` moves open → input → queued → running; closed by tool.result. */
    'tool.call': {
      toolUseId: z.string(),
      name: z.string(),
      kind: ToolKindSchema,
      label: z.string(),
      phase: z.enum(['open', 'input', 'queued', 'running']),
      input: Json.optional(),
    },
    'tool.progress': { toolUseId: z.string(), text: z.string() },
    'tool.result': {
      toolUseId: z.string(),
      isError: z.boolean(),
      output: z.string(),
      /** Set when One Works closed the span itself (e.g. the child died mid-tool). */
      closedBy: z.enum(['agent', 'runtime']).optional(),
    },
    'permission.requested': {
      requestId: z.string(),
      tools: z.array(z.object({ toolUseId: z.string(), name: z.string(), kind: ToolKindSchema, label: z.string() })),
      /** The One Works answers offered (`allow-once`, `allow-session`, `deny`); logs written before them hold native values. */
      options: z.array(z.string()),
    },
    'permission.decided': {
      requestId: z.string(),
      decision: z.enum(['allow', 'deny']),
      /** The One Works answer given (`allow-once`, `allow-session`, `deny`); older logs hold the native one. */
      option: z.string(),
      /** The agent's own answer value it was mapped to (droid: `proceed_once` / `cancel`; Claude Code: `allow` / `deny`). */
      nativeOption: z.string().optional(),
      by: z.enum(['policy', 'human', 'agent']),
      reason: z.string().optional(),
      /** For a person's answer: where it came from. */
      channel: AnswerChannelSchema.optional(),
    },
    'question.asked': { requestId: z.string(), questions: z.array(Json) },
    'question.answered': {
      requestId: z.string(),
      cancelled: z.boolean(),
      answers: z.array(Json),
      by: z.enum(['policy', 'human']),
      channel: AnswerChannelSchema.optional(),
    },
    /** A person cleared the session's needs-attention state (`one-works sessions resolve`). */
    'attention.resolved': { by: z.literal('human'), note: z.string().optional(), cleared: z.array(z.string()) },
    usage: { scope: z.enum(['turn', 'session']), usage: UsageSchema },
    hook: {
      hookId: z.string(),
      event: z.string(),
      phase: z.enum(['started', 'completed']),
      status: z.string().optional(),
      toolUseId: z.string().optional(),
    },
    child_session: { childSessionId: z.string(), toolUseId: z.string().optional(), description: z.string().optional() },
    'settings.changed': { settings: z.record(z.string(), Json) },
    /** The agent refused the session's model (e.g. an organisation policy): the session goes on with the agent's default. */
    'model.warning': { model: z.string(), message: z.string() },
    'working.changed': { state: z.string() },
    log: { level: z.enum(['debug', 'info', 'warn', 'error']), message: z.string() },
    error: { code: z.string(), message: z.string(), retryable: z.boolean().optional() },
    /** A native fact with no mapping yet: kept, never dropped silently. */
    native: { nativeType: z.string(), payload: Json },
  } as const;
}

type Payloads = ReturnType<typeof buildPayloads>;
let builtPayloads: Payloads | undefined;
const payloads = (): Payloads => (builtPayloads ??= buildPayloads());
export type RuntimeEventType = keyof Payloads;

function member<T extends RuntimeEventType>(type: T) {
  return z.object({ type: z.literal(type), key: z.string(), ...payloads()[type] });
}

type Members = [ReturnType<typeof member<'session.started'>>, ...ReturnType<typeof member<RuntimeEventType>>[]];
let builtMembers: Members | undefined;
const draftMembers = (): Members =>
  (builtMembers ??= (Object.keys(payloads()) as RuntimeEventType[]).map((t) => member(t)) as unknown as Members);

/** What an adapter emits: a typed payload plus a key from native identifiers. */
export const EventDraftSchema: z.ZodType<EventDraft> = lazySchema(() =>
  z.discriminatedUnion('type', draftMembers()),
) as unknown as z.ZodType<EventDraft>;

/**
 * Event logs written before version facts were a record hold droid's pair on `session.started`
 * (`apiVersion`, `protocolVersion`): read them as that adapter's version facts.
 */
function foldLegacyVersionFacts(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || (value as { type?: unknown }).type !== 'session.started') return value;
  const { apiVersion, protocolVersion, ...rest } = value as Record<string, unknown>;
  if (rest.versionFacts !== undefined) return rest;
  const facts = Object.fromEntries(
    Object.entries({ apiVersion, protocolVersion }).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
  return Object.keys(facts).length > 0 ? { ...rest, versionFacts: facts } : rest;
}

// What the session layer adds to a draft.
const stampShape = () => ({ sessionId: z.string(), seq: z.number().int().nonnegative(), at: z.string() });

// The stamped members, as written today (the legacy fold below comes before them when reading).
const StampedEventSchema: z.ZodType = lazySchema(() => {
  const stamp = stampShape();
  const members = (draftMembers() as unknown as z.ZodObject[]).map((m) => m.extend(stamp));
  return z.discriminatedUnion('type', members as unknown as Members);
});

/** A recorded event: a draft stamped by the session layer (older logs' shapes are read too). */
export const RuntimeEventSchema: z.ZodType<RuntimeEvent> = lazySchema(() =>
  z.preprocess(foldLegacyVersionFacts, StampedEventSchema),
) as unknown as z.ZodType<RuntimeEvent>;

// The stamped member of one type, built on its first use.
const stampedMembers = new Map<string, z.ZodType>();
function stampedMember(type: RuntimeEventType): z.ZodType {
  let schema = stampedMembers.get(type);
  if (!schema) {
    // As a plain object schema: TypeScript cannot name the union of every member's extension.
    schema = (member(type) as unknown as z.ZodObject).extend(stampShape());
    stampedMembers.set(type, schema);
  }
  return schema;
}

/**
 * Parses a recorded event as `RuntimeEventSchema.safeParse` does (the same acceptance and the same
 * data), building only the member of the value's own `type`: a command that reads a few events (a
 * live view filling what it missed, a title) does not build all of the union's members first. A
 * value without a known type goes to the whole schema, which says what is wrong.
 */
export function parseRuntimeEvent(value: unknown): z.ZodSafeParseResult<RuntimeEvent> {
  const folded = foldLegacyVersionFacts(value);
  const type = typeof folded === 'object' && folded !== null ? (folded as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.hasOwn(payloads(), type)) return RuntimeEventSchema.safeParse(value);
  return stampedMember(type as RuntimeEventType).safeParse(folded) as z.ZodSafeParseResult<RuntimeEvent>;
}

/**
 * A quick check of an event about to be recorded (see core/schema-check.ts): `true` only for
 * values that RuntimeEventSchema accepts (an event that passes the stamped members still passes
 * after the legacy fold, which only moves string version fields into a string record); `false`
 * means "ask the schema".
 */
export const isValidRuntimeEvent: QuickCheck = compileQuickCheck(StampedEventSchema);

// The quick check of each stamped member, compiled on its first use.
const memberChecks = new Map<string, QuickCheck>();

/**
 * `isValidRuntimeEvent` compiled only for the member of the value's own `type` (as
 * parseRuntimeEvent builds only that member): `true` only for values RuntimeEventSchema accepts;
 * `false` means "ask the schema". For a reader that checks many recorded lines it does not keep.
 */
export function isValidRecordedEvent(value: unknown): boolean {
  const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !Object.hasOwn(payloads(), type)) return false;
  let check = memberChecks.get(type);
  if (!check) {
    check = compileQuickCheck(stampedMember(type as RuntimeEventType));
    memberChecks.set(type, check);
  }
  return check(value);
}

type DraftOf<T extends RuntimeEventType> = { type: T; key: string } & {
  [K in keyof Payloads[T]]: Payloads[T][K] extends z.ZodType ? z.infer<Payloads[T][K]> : never;
};
type OptionalUndefined<T> = { [K in keyof T as undefined extends T[K] ? K : never]?: T[K] } & {
  [K in keyof T as undefined extends T[K] ? never : K]: T[K];
};

export type EventDraft = { [T in RuntimeEventType]: OptionalUndefined<DraftOf<T>> }[RuntimeEventType];
export type RuntimeEvent = EventDraft & { sessionId: string; seq: number; at: string };
