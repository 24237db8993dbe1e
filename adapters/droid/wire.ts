import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';

/**
 * Wire shapes of droid's stream-jsonrpc protocol (observed with droid 0.215.x / 0.225.x, see
 * docs/droid-protocol.md). What droid sends is parsed leniently (`z.looseObject`, plain strings
 * instead of enums) because versions drift; what One Works sends is strict so our own typos fail
 * before they reach the wire. Types are inferred from the schemas, never written by hand.
 */

/** The only Factory API version droid accepts (`factoryApiVersion`; anything else → -32700). */
export const DROID_API_VERSION = '1.0.0';

// ── Envelope ────────────────────────────────────────────────────────────────────────────────

export const DroidMetaSchema = lazySchema(() =>
  z.looseObject({
    traceparent: z.string().optional(),
    tracestate: z.string().optional(),
    requestAttribution: z.unknown().optional(),
  }),
);

export const DroidWireErrorSchema = lazySchema(() =>
  z.looseObject({
    code: z.number(),
    message: z.string(),
    data: z.unknown().optional(),
  }),
);

// Inbound: the version fields are optional here so a missing or different version reaches
// negotiate.ts, which ends the session with a message naming what was announced.
const inboundEnvelope = {
  jsonrpc: z.literal('2.0'),
  factoryApiVersion: z.string().optional(),
  factoryProtocolVersion: z.string().optional(),
  _meta: DroidMetaSchema.optional(),
};

export const DroidRequestFrameSchema = lazySchema(() =>
  z.looseObject({
    ...inboundEnvelope,
    type: z.literal('request'),
    id: z.string(),
    method: z.string(),
    params: z.unknown().optional(),
  }),
);

export const DroidNotificationFrameSchema = lazySchema(() =>
  z.looseObject({
    ...inboundEnvelope,
    type: z.literal('notification'),
    method: z.string(),
    params: z.unknown().optional(),
  }),
);

/** droid answers frames it could not read with `id: null` (e.g. -32700 for a numeric id). */
export const DroidResponseFrameSchema = lazySchema(() =>
  z.looseObject({
    ...inboundEnvelope,
    type: z.literal('response'),
    id: z.string().nullable(),
    result: z.unknown().optional(),
    error: DroidWireErrorSchema.optional(),
  }),
);

/** Any frame droid writes to stdout, discriminated by the required `type` field. */
export const DroidFrameSchema = lazySchema(() =>
  z.discriminatedUnion('type', [DroidRequestFrameSchema, DroidNotificationFrameSchema, DroidResponseFrameSchema]),
);
export type DroidFrame = z.infer<typeof DroidFrameSchema>;

/**
 * What One Works writes: every frame carries `type`, string ids and both version fields. A plain
 * union: a response carries either `result` or `error`, so `type` alone does not discriminate.
 */
const outboundEnvelope = {
  jsonrpc: z.literal('2.0'),
  factoryApiVersion: z.literal(DROID_API_VERSION),
  factoryProtocolVersion: z.string(),
};
export const DroidOutboundFrameSchema = lazySchema(() =>
  z.union([
    z.strictObject({ ...outboundEnvelope, type: z.literal('request'), id: z.string(), method: z.string(), params: z.unknown() }),
    z.strictObject({ ...outboundEnvelope, type: z.literal('notification'), method: z.string(), params: z.unknown() }),
    z.strictObject({ ...outboundEnvelope, type: z.literal('response'), id: z.string(), result: z.unknown() }),
    z.strictObject({ ...outboundEnvelope, type: z.literal('response'), id: z.string(), error: DroidWireErrorSchema }),
  ]),
);
export type DroidOutboundFrame = z.infer<typeof DroidOutboundFrameSchema>;

// ── Shared shapes ───────────────────────────────────────────────────────────────────────────

/** Token counts; droid sends all five plus `factoryCredits`, but any may be missing. */
export const DroidTokenUsageSchema = lazySchema(() =>
  z.looseObject({
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    cacheCreationTokens: z.number().optional(),
    cacheReadTokens: z.number().optional(),
    thinkingTokens: z.number().optional(),
    factoryCredits: z.number().optional(),
  }),
);
export type DroidTokenUsage = z.infer<typeof DroidTokenUsageSchema>;

/** One content block; the typed block shapes below are read from it with safeParse. */
export const DroidContentBlockSchema = lazySchema(() => z.looseObject({ type: z.string() }));
export const DroidTextBlockSchema = lazySchema(() => z.looseObject({ type: z.literal('text'), text: z.string() }));
export const DroidThinkingBlockSchema = lazySchema(() => z.looseObject({ type: z.literal('thinking'), thinking: z.string() }));
export const DroidToolUseSchema = lazySchema(() =>
  z.looseObject({
    type: z.string().optional(),
    id: z.string(),
    name: z.string(),
    input: z.unknown().optional(),
  }),
);
export type DroidToolUse = z.infer<typeof DroidToolUseSchema>;
/** camelCase on the wire (droid's on-disk journal uses snake_case; both are accepted). */
export const DroidToolResultBlockSchema = lazySchema(() =>
  z.looseObject({
    type: z.literal('tool_result'),
    toolUseId: z.string().optional(),
    tool_use_id: z.string().optional(),
    content: z.unknown().optional(),
    isError: z.boolean().optional(),
    is_error: z.boolean().optional(),
  }),
);

/** A message (`create_message.message`, `load_session` history). `role` is user|assistant|tool|system. */
export const DroidMessageSchema = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    role: z.string(),
    content: z.union([z.string(), z.array(DroidContentBlockSchema)]).optional(),
    visibility: z.string().optional(),
    parentId: z.string().nullable().optional(),
    createdAt: z.number().optional(),
  }),
);
export type DroidMessage = z.infer<typeof DroidMessageSchema>;

export const DroidSessionSettingsSchema = lazySchema(() =>
  z.looseObject({
    modelId: z.string().optional(),
    reasoningEffort: z.string().optional(),
    autonomyMode: z.string().optional(),
    interactionMode: z.string().optional(),
    autonomyLevel: z.string().optional(),
    availableAutonomyLevels: z.array(z.string()).optional(),
  }),
);

export const DroidModelSchema = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    modelId: z.string().optional(),
    modelProvider: z.string().optional(),
    displayName: z.string().optional(),
    shortDisplayName: z.string().optional(),
    supportedReasoningEfforts: z.array(z.string()).optional(),
    defaultReasoningEffort: z.string().optional(),
    isCustom: z.boolean().optional(),
    deprecated: z.boolean().optional(),
    disabled: z.boolean().optional(),
    disabledReason: z.string().optional(),
  }),
);
export type DroidModel = z.infer<typeof DroidModelSchema>;

// ── Params and results of the methods One Works calls ───────────────────────────────────────

export const DroidAutonomyLevelSchema = lazySchema(() => z.enum(['off', 'low', 'medium', 'high']));
export const DroidInteractionModeSchema = lazySchema(() => z.enum(['auto', 'spec', 'agi', 'mission']));
const toolFilters = {
  additionalToolIds: z.array(z.string()).optional(),
  enabledToolIds: z.array(z.string()).optional(),
  disabledToolIds: z.array(z.string()).optional(),
};
const JsonSchemaFormatSchema = lazySchema(() =>
  z.strictObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }),
);

export const InitializeSessionParamsSchema = lazySchema(() =>
  z.strictObject({
    machineId: z.string(),
    cwd: z.string(),
    sessionId: z.string().optional(),
    modelId: z.string().optional(),
    reasoningEffort: z.string().optional(),
    interactionMode: DroidInteractionModeSchema.optional(),
    autonomyLevel: DroidAutonomyLevelSchema.optional(),
    title: z.string().optional(),
    tags: z.array(z.strictObject({ name: z.string(), metadata: z.record(z.string(), z.string()).optional() })).optional(),
    autoRejectPermissionRequests: z.boolean().optional(),
    blockOnMcpLoad: z.boolean().optional(),
    disableBuiltinSkills: z.boolean().optional(),
    mcpServers: z.array(z.record(z.string(), z.unknown())).optional(),
    structuredOutputFormat: JsonSchemaFormatSchema.nullable().optional(),
    restrictToolIds: z.array(z.string()).optional(),
    ...toolFilters,
  }),
);
export type InitializeSessionParams = z.infer<typeof InitializeSessionParamsSchema>;

const SessionSnapshotSchema = lazySchema(() =>
  z.looseObject({
    /** Kept as `unknown[]`: projectHistory parses each message on its own, so one odd message cannot fail a load. */
    messages: z.array(z.unknown()),
    title: z.string().optional(),
  }),
);

export const InitializeSessionResultSchema = lazySchema(() =>
  z.looseObject({
    sessionId: z.string().min(1),
    hostId: z.string().optional(),
    session: SessionSnapshotSchema,
    settings: DroidSessionSettingsSchema.optional(),
    availableModels: z.array(DroidModelSchema).optional(),
  }),
);
export type InitializeSessionResult = z.infer<typeof InitializeSessionResultSchema>;

export const LoadSessionParamsSchema = lazySchema(() =>
  z.strictObject({
    sessionId: z.string(),
    agentTurnOutcomeTurnId: z.string().optional(),
    loadAllMessages: z.boolean().optional(),
    messageLimit: z.number().int().positive().optional(),
    autoRejectPermissionRequests: z.boolean().optional(),
    disableBuiltinSkills: z.boolean().optional(),
    mcpServers: z.array(z.record(z.string(), z.unknown())).optional(),
    structuredOutputFormat: JsonSchemaFormatSchema.nullable().optional(),
    ...toolFilters,
  }),
);
export type LoadSessionParams = z.infer<typeof LoadSessionParamsSchema>;

/** droid 0.225.2: the load result has no `sessionId` (the caller already knows it). */
export const LoadSessionResultSchema = lazySchema(() =>
  z.looseObject({
    session: SessionSnapshotSchema,
    hasOlderMessages: z.boolean().optional(),
    settings: DroidSessionSettingsSchema.optional(),
    availableModels: z.array(DroidModelSchema).optional(),
    isAgentLoopInProgress: z.boolean().optional(),
    workingState: z.string().optional(),
    cwd: z.string().optional(),
    tokenUsage: DroidTokenUsageSchema.optional(),
    agentTurnOutcome: z.looseObject({ turnId: z.string().optional(), reason: z.string().optional() }).nullable().optional(),
  }),
);
export type LoadSessionResult = z.infer<typeof LoadSessionResultSchema>;

/** Flat settings; droid accepts any `modelId` silently (validate against list_models first). */
export const UpdateSessionSettingsParamsSchema = lazySchema(() =>
  z.strictObject({
    modelId: z.string().optional(),
    reasoningEffort: z.string().optional(),
    interactionMode: DroidInteractionModeSchema.optional(),
    autonomyLevel: DroidAutonomyLevelSchema.optional(),
    specModeModelId: z.string().nullable().optional(),
    specModeReasoningEffort: z.string().nullable().optional(),
    compactionThresholdCheckEnabled: z.boolean().optional(),
    restrictToolIds: z.array(z.string()).optional(),
    ...toolFilters,
  }),
);
export type UpdateSessionSettingsParams = z.infer<typeof UpdateSessionSettingsParamsSchema>;

/** `messageId` becomes the user message id and the `turnId` of `agent_turn_completed`. */
export const AddUserMessageParamsSchema = lazySchema(() =>
  z.strictObject({
    text: z.string(),
    messageId: z.string().optional(),
    images: z.array(z.strictObject({ type: z.literal('base64'), data: z.string(), mediaType: z.string() })).optional(),
    outputFormat: JsonSchemaFormatSchema.optional(),
    queuePlacement: z.enum(['end_of_turn', 'end_of_loop']).optional(),
    skipAgentLoop: z.boolean().optional(),
  }),
);
export type AddUserMessageParams = z.infer<typeof AddUserMessageParamsSchema>;

export const EmptyParamsSchema = lazySchema(() => z.strictObject({}));
/** Most droid methods answer `{}`; lenient so an added field does not break us. */
export const EmptyResultSchema = lazySchema(() => z.looseObject({}));

export const CloseSessionParamsSchema = lazySchema(() =>
  z.strictObject({
    reason: z.enum(['clear', 'logout', 'prompt_input_exit', 'other']).optional(),
  }),
);

export const ListModelsParamsSchema = lazySchema(() => z.strictObject({ includeDisabled: z.boolean().optional() }));
export const ListModelsResultSchema = lazySchema(() => z.looseObject({ models: z.array(DroidModelSchema) }));
export type ListModelsResult = z.infer<typeof ListModelsResultSchema>;

export const ListToolsParamsSchema = lazySchema(() =>
  z.strictObject({
    modelId: z.string().optional(),
    interactionMode: DroidInteractionModeSchema.optional(),
    autonomyLevel: DroidAutonomyLevelSchema.optional(),
  }),
);
export const DroidToolInfoSchema = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    llmId: z.string().optional(),
    displayName: z.string().optional(),
    description: z.string().optional(),
    category: z.string().optional(),
    defaultAllowed: z.boolean().optional(),
    currentlyAllowed: z.boolean().optional(),
  }),
);
export const ListToolsResultSchema = lazySchema(() => z.looseObject({ tools: z.array(DroidToolInfoSchema) }));
export type ListToolsResult = z.infer<typeof ListToolsResultSchema>;

export const DroidMcpServerStatusSchema = lazySchema(() =>
  z.looseObject({
    name: z.string(),
    status: z.string().optional(),
    source: z.string().optional(),
    serverType: z.string().optional(),
    error: z.string().optional(),
    toolCount: z.number().optional(),
  }),
);
export const ListMcpServersResultSchema = lazySchema(() =>
  z.looseObject({
    servers: z.array(DroidMcpServerStatusSchema),
    summary: z.looseObject({}).optional(),
  }),
);
export type ListMcpServersResult = z.infer<typeof ListMcpServersResultSchema>;

export const RenameSessionParamsSchema = lazySchema(() => z.strictObject({ title: z.string() }));
export const RenameSessionResultSchema = lazySchema(() => z.looseObject({ success: z.boolean().optional() }));

/** droid 0.225.2: the live process keeps running the ORIGINAL session after a fork. */
export const ForkSessionParamsSchema = lazySchema(() =>
  z.strictObject({
    title: z.string().optional(),
    tags: z.array(z.strictObject({ name: z.string(), metadata: z.record(z.string(), z.string()).optional() })).optional(),
  }),
);
export const ForkSessionResultSchema = lazySchema(() => z.looseObject({ newSessionId: z.string() }));

// ── Requests droid sends to us, and our answers ─────────────────────────────────────────────

/** `details.type` = confirmationType: exec | edit | create | apply_patch | mcp_tool | exit_spec_mode | … */
export const DroidPermissionDetailsSchema = lazySchema(() =>
  z.looseObject({
    type: z.string(),
    fullCommand: z.string().optional(),
    impactLevel: z.string().optional(),
    filePath: z.string().optional(),
    fileName: z.string().optional(),
    files: z.array(z.unknown()).optional(),
    toolName: z.string().optional(),
    serverName: z.string().optional(),
  }),
);
export const DroidPermissionToolUseSchema = lazySchema(() =>
  z.looseObject({
    toolUse: DroidToolUseSchema,
    confirmationType: z.string().optional(),
    details: DroidPermissionDetailsSchema.optional(),
  }),
);
export type DroidPermissionToolUse = z.infer<typeof DroidPermissionToolUseSchema>;

export const RequestPermissionParamsSchema = lazySchema(() =>
  z.looseObject({
    toolUses: z.array(DroidPermissionToolUseSchema),
    options: z.array(z.looseObject({ label: z.string().optional(), value: z.string() })),
    associatedSessionIds: z.array(z.string()).optional(),
  }),
);
export type RequestPermissionParams = z.infer<typeof RequestPermissionParamsSchema>;

/** `editedSpecContent` is required by droid with `proceed_edit`. */
export const RequestPermissionAnswerSchema = lazySchema(() =>
  z.strictObject({
    selectedOption: z.string(),
    comment: z.string().optional(),
    editedSpecContent: z.string().optional(),
  }),
);
export type RequestPermissionAnswer = z.infer<typeof RequestPermissionAnswerSchema>;

/** Questions are numbered from 1. */
export const AskUserParamsSchema = lazySchema(() =>
  z.looseObject({
    toolCallId: z.string(),
    questions: z.array(
      z.looseObject({
        index: z.number(),
        topic: z.string().optional(),
        question: z.string(),
        options: z.array(z.string()).optional(),
        multiSelect: z.boolean().optional(),
      }),
    ),
  }),
);
export type AskUserParams = z.infer<typeof AskUserParamsSchema>;

/** `answer` is free text passed to the model verbatim (multi-select: comma-separated). */
export const AskUserAnswerSchema = lazySchema(() =>
  z.strictObject({
    answers: z.array(z.strictObject({ index: z.number().int(), question: z.string(), answer: z.string() })),
    cancelled: z.boolean().optional(),
  }),
);
export type AskUserAnswer = z.infer<typeof AskUserAnswerSchema>;
