import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import type { Envelope, Inbound, RequestDescriptor, WireError } from '../../core/protocol/index.js';
import { CODEX_METHODS } from './methods.js';

/**
 * Zod schemas of what One Works reads from and sends to `codex app-server` (0.171.0): lenient
 * (`looseObject`) for what Codex sends, since versions drift. adapters/codex/wire-check.ts
 * asserts at compile time that each schema accepts every value of the type Codex's own
 * `generate-ts` declares (adapters/codex/generated), so a regenerated wire that breaks one fails `tsc`.
 */

const Nullish = <T extends z.ZodType>(schema: T) => schema.nullish();

// ---- envelope -------------------------------------------------------------------------------

/**
 * The app-server's JSON-RPC 2.0 without the `jsonrpc` member, one object per line. Codex's own
 * requests to the client carry numeric ids from 0, a separate id space from ours; a response
 * echoes the id (number or string) unchanged.
 */
export const codexEnvelope: Envelope = {
  request: (id, method, params) => (params === undefined ? { id, method } : { id, method, params }),
  notification: (method, params) => (params === undefined ? { method } : { method, params }),
  response: (id, result) => ({ id, result: result ?? null }),
  errorResponse: (id, error: WireError) => ({ id, error }),
  classify: classifyCodexMessage,
};

const IdSchema = lazySchema(() => z.union([z.string(), z.number()]));
const FrameSchema = lazySchema(() =>
  z.looseObject({
    id: IdSchema.nullish(),
    method: z.string().optional(),
    params: z.unknown().optional(),
    result: z.unknown().optional(),
    error: z.looseObject({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
  }),
);

/** Maps one inbound frame to `Inbound`. Never throws. */
export function classifyCodexMessage(message: unknown): Inbound {
  const parsed = FrameSchema.safeParse(message);
  if (!parsed.success || typeof message !== 'object' || message === null || Array.isArray(message)) {
    return { kind: 'invalid', reason: 'not a JSON-RPC object (id must be a string or a number)' };
  }
  const frame = parsed.data;
  const hasId = frame.id !== undefined && frame.id !== null;
  if (frame.method !== undefined) {
    return hasId
      ? { kind: 'request', id: frame.id!, method: frame.method, params: frame.params }
      : { kind: 'notification', method: frame.method, params: frame.params };
  }
  if (frame.error) {
    const error: WireError = { code: frame.error.code, message: frame.error.message };
    if (frame.error.data !== undefined) error.data = frame.error.data;
    return { kind: 'error', id: hasId ? frame.id! : null, error };
  }
  if (hasId && Object.hasOwn(message, 'result')) return { kind: 'response', id: frame.id!, result: frame.result };
  return { kind: 'invalid', reason: 'neither request, notification nor response' };
}

// ---- requests -------------------------------------------------------------------------------

export const InitializeParamsSchema = lazySchema(() =>
  z.object({
    clientInfo: z.object({ name: z.string(), title: z.string().nullable(), version: z.string() }),
    capabilities: z.null(),
  }),
);
export const InitializeResponseSchema = lazySchema(() =>
  z.looseObject({
    userAgent: z.string(),
    codexHome: z.string(),
    platformFamily: z.string().optional(),
    platformOs: z.string().optional(),
  }),
);

/** The approval policies One Works sends (it always sends `untrusted`: ask before anything not known read-only). */
export const AskForApprovalSchema = lazySchema(() => z.enum(['untrusted', 'on-request', 'never']));
export const SandboxModeSchema = lazySchema(() => z.enum(['read-only', 'workspace-write', 'danger-full-access']));

const ThreadSettingsShape = {
  model: z.string().nullish(),
  cwd: z.string().nullish(),
  approvalPolicy: AskForApprovalSchema.nullish(),
  sandbox: SandboxModeSchema.nullish(),
  developerInstructions: z.string().nullish(),
};
export const ThreadStartParamsSchema = lazySchema(() => z.object(ThreadSettingsShape));
export const ThreadResumeParamsSchema = lazySchema(() => z.object({ threadId: z.string(), ...ThreadSettingsShape }));

const ThreadRefSchema = lazySchema(() => z.looseObject({ id: z.string() }));
export const ThreadStartResponseSchema = lazySchema(() => z.looseObject({ thread: ThreadRefSchema, model: z.string().optional() }));
export const ThreadResumeResponseSchema = ThreadStartResponseSchema;

// One Works sends plain text: no text elements (mentions, images).
export const UserInputSchema = lazySchema(() => z.object({ type: z.literal('text'), text: z.string(), text_elements: z.tuple([]) }));
export const TurnStartParamsSchema = lazySchema(() =>
  z.object({
    threadId: z.string(),
    input: z.array(UserInputSchema),
    model: z.string().nullish(),
    effort: z.string().nullish(),
  }),
);

export const TurnStatusSchema = lazySchema(() => z.enum(['completed', 'interrupted', 'failed', 'inProgress']));
export const TurnErrorSchema = lazySchema(() => z.looseObject({ message: z.string(), additionalDetails: Nullish(z.string()) }));
export const TurnSchema = lazySchema(() => z.looseObject({ id: z.string(), status: TurnStatusSchema, error: Nullish(TurnErrorSchema) }));
export const TurnStartResponseSchema = lazySchema(() => z.looseObject({ turn: TurnSchema }));
export const TurnInterruptParamsSchema = lazySchema(() => z.object({ threadId: z.string(), turnId: z.string() }));
export const TurnSteerParamsSchema = lazySchema(() =>
  z.object({ threadId: z.string(), input: z.array(UserInputSchema), expectedTurnId: z.string() }),
);

/** `thread/loaded/list`: the threads loaded in the app-server's memory (a cheap round trip for `ready`). */
export const ThreadLoadedListParamsSchema = lazySchema(() => z.object({ cursor: z.string().nullish(), limit: z.number().int().nullish() }));
export const ThreadLoadedListResponseSchema = lazySchema(() =>
  z.looseObject({ data: z.array(z.string()), nextCursor: z.string().nullish() }),
);

export const ModelListParamsSchema = lazySchema(() => z.object({ includeHidden: z.boolean().nullish(), cursor: z.string().nullish() }));
export const ModelSchema = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    model: z.string(),
    displayName: z.string(),
    hidden: z.boolean(),
    isDefault: z.boolean(),
    supportedReasoningEfforts: z.array(z.looseObject({ reasoningEffort: z.string() })),
  }),
);
export const ModelListResponseSchema = lazySchema(() => z.looseObject({ data: z.array(ModelSchema), nextCursor: Nullish(z.string()) }));

/** Request descriptors: method, params and result kept together. */
export const CODEX_REQUESTS = {
  initialize: { method: CODEX_METHODS.initialize, params: InitializeParamsSchema, result: InitializeResponseSchema },
  threadStart: { method: CODEX_METHODS.threadStart, params: ThreadStartParamsSchema, result: ThreadStartResponseSchema },
  threadResume: { method: CODEX_METHODS.threadResume, params: ThreadResumeParamsSchema, result: ThreadResumeResponseSchema },
  turnStart: { method: CODEX_METHODS.turnStart, params: TurnStartParamsSchema, result: TurnStartResponseSchema },
  turnInterrupt: { method: CODEX_METHODS.turnInterrupt, params: TurnInterruptParamsSchema, result: z.unknown() },
  turnSteer: { method: CODEX_METHODS.turnSteer, params: TurnSteerParamsSchema, result: z.unknown() },
  modelList: { method: CODEX_METHODS.modelList, params: ModelListParamsSchema, result: ModelListResponseSchema },
  threadLoadedList: {
    method: CODEX_METHODS.threadLoadedList,
    params: ThreadLoadedListParamsSchema,
    result: ThreadLoadedListResponseSchema,
  },
} as const satisfies Record<string, RequestDescriptor<unknown, unknown>>;

// ---- notifications --------------------------------------------------------------------------

/** A thread item: its `type` and `id`, plus the members the projection reads for its kinds. */
export const ThreadItemSchema = lazySchema(() =>
  z.looseObject({
    type: z.string(),
    id: z.string().optional(),
    text: z.string().optional(),
    command: z.string().optional(),
    cwd: z.string().optional(),
    status: z.unknown().optional(),
    aggregatedOutput: Nullish(z.string()),
    exitCode: Nullish(z.number()),
    changes: z.array(z.looseObject({ path: z.string(), kind: z.unknown().optional() })).optional(),
    server: z.string().optional(),
    tool: z.unknown().optional(),
    arguments: z.unknown().optional(),
  }),
);
export type ThreadItem = z.infer<typeof ThreadItemSchema>;

export const TurnNotificationSchema = lazySchema(() => z.looseObject({ threadId: z.string(), turn: TurnSchema }));
export const ItemNotificationSchema = lazySchema(() => z.looseObject({ threadId: z.string(), turnId: z.string(), item: ThreadItemSchema }));
export const DeltaNotificationSchema = lazySchema(() =>
  z.looseObject({ threadId: z.string(), turnId: z.string(), itemId: z.string(), delta: z.string() }),
);
const TokenBreakdownSchema = lazySchema(() =>
  z.looseObject({
    totalTokens: z.number(),
    inputTokens: z.number(),
    cachedInputTokens: z.number(),
    outputTokens: z.number(),
    reasoningOutputTokens: z.number(),
  }),
);
export const TokenUsageNotificationSchema = lazySchema(() =>
  z.looseObject({
    threadId: z.string(),
    turnId: z.string(),
    tokenUsage: z.looseObject({ total: TokenBreakdownSchema, last: TokenBreakdownSchema }),
  }),
);
export type TokenBreakdown = z.infer<typeof TokenBreakdownSchema>;
export const ErrorNotificationSchema = lazySchema(() =>
  z.looseObject({
    error: TurnErrorSchema,
    willRetry: z.boolean(),
    threadId: z.string(),
    turnId: z.string(),
  }),
);
export const WarningNotificationSchema = lazySchema(() => z.looseObject({ threadId: Nullish(z.string()), message: z.string() }));

// ---- server requests ------------------------------------------------------------------------

export const CommandApprovalParamsSchema = lazySchema(() =>
  z.looseObject({
    threadId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    command: Nullish(z.string()),
    cwd: Nullish(z.string()),
    reason: Nullish(z.string()),
  }),
);
export const FileChangeApprovalParamsSchema = lazySchema(() =>
  z.looseObject({
    threadId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    reason: Nullish(z.string()),
    grantRoot: Nullish(z.string()),
  }),
);
export const PermissionsApprovalParamsSchema = lazySchema(() =>
  z.looseObject({
    threadId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    reason: z.string().nullable(),
    permissions: z.unknown(),
  }),
);
export const UserInputParamsSchema = lazySchema(() =>
  z.looseObject({
    threadId: z.string(),
    turnId: z.string(),
    itemId: z.string(),
    questions: z.array(
      z.looseObject({
        id: z.string(),
        header: z.string(),
        question: z.string(),
        options: z.array(z.looseObject({ label: z.string() })).nullable(),
      }),
    ),
  }),
);

/** The decisions an approval answer carries (command and file-change approvals share these). */
export type ApprovalDecision = 'accept' | 'acceptForSession' | 'decline' | 'cancel';
