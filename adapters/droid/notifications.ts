import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { compileQuickCheck, type QuickCheck } from '../../core/schema-check.js';
import { DroidMcpServerStatusSchema, DroidMessageSchema, DroidTokenUsageSchema, DroidToolUseSchema } from './wire.js';

/**
 * The notification union of `droid.session_notification` (37 types in droid 0.225.2; see
 * docs/droid-protocol.md §6). Every member is lenient: only the fields One Works reads are
 * declared, all others pass through. `parseDroidNotification` never throws: an unknown type is
 * reported as `unknown` and a known type with an unexpected shape as `malformed`, both with the
 * raw notification kept, so the projector can keep them as `native` events.
 */

// A type's schema, built on first use (its shape with it).
function member<T extends string, S extends z.ZodRawShape>(type: T, shape: () => S) {
  return lazySchema(() => z.looseObject({ type: z.literal(type), ...shape() }));
}

const deltaShape = () => ({ messageId: z.string(), blockIndex: z.number().optional(), textDelta: z.string() });
const str = lazySchema(() => z.string().optional());

/** The `update` of `tool_progress_update`. */
export const ToolProgressSchema = lazySchema(() =>
  z.looseObject({
    type: str,
    text: str,
    status: str,
    error: z.unknown().optional(),
    timestamp: z.number().optional(),
    fullOutput: str,
  }),
);

/** One schema per native notification type, keyed by that type. */
export const DROID_NOTIFICATION_SCHEMAS = {
  create_message: member('create_message', () => ({
    message: DroidMessageSchema,
    parentId: z.string().nullable().optional(),
    requestId: str,
  })),
  assistant_text_delta: member('assistant_text_delta', deltaShape),
  assistant_text_complete: member('assistant_text_complete', () => ({ messageId: z.string(), blockIndex: z.number().optional() })),
  thinking_text_delta: member('thinking_text_delta', deltaShape),
  thinking_text_complete: member('thinking_text_complete', () => ({
    messageId: z.string(),
    blockIndex: z.number().optional(),
    durationMs: z.number().optional(),
  })),
  assistant_message_retracted: member('assistant_message_retracted', () => ({ messageId: z.string() })),
  tool_call: member('tool_call', () => ({ toolUse: DroidToolUseSchema })),
  tool_execution_phase_changed: member('tool_execution_phase_changed', () => ({ toolUseId: z.string(), toolName: str, phase: z.string() })),
  tool_progress_update: member('tool_progress_update', () => ({ toolUseId: z.string(), toolName: str, update: ToolProgressSchema })),
  tool_execution_heartbeat: member('tool_execution_heartbeat', () => ({ toolUseId: z.string(), toolName: str })),
  tool_result: member('tool_result', () => ({
    toolUseId: z.string(),
    messageId: str,
    content: z.unknown(),
    isError: z.boolean().optional(),
  })),
  permission_resolved: member('permission_resolved', () => ({
    requestId: z.string(),
    toolUseIds: z.array(z.string()).optional(),
    selectedOption: z.string(),
  })),
  droid_working_state_changed: member('droid_working_state_changed', () => ({ newState: z.string() })),
  session_token_usage_changed: member('session_token_usage_changed', () => ({
    sessionId: str,
    tokenUsage: DroidTokenUsageSchema,
    inclusiveTokenUsage: DroidTokenUsageSchema.optional(),
    lastCallTokenUsage: DroidTokenUsageSchema.optional(),
  })),
  agent_turn_completed: member('agent_turn_completed', () => ({
    reason: z.string(),
    turnId: str,
    tokenUsage: DroidTokenUsageSchema.optional(),
    cumulativeTokenUsage: DroidTokenUsageSchema.optional(),
    childTokenUsage: DroidTokenUsageSchema.optional(),
    cumulativeChildTokenUsage: DroidTokenUsageSchema.optional(),
    durationMs: z.number().optional(),
  })),
  settings_updated: member('settings_updated', () => ({ settings: z.record(z.string(), z.unknown()), requestId: str })),
  session_title_updated: member('session_title_updated', () => ({ title: z.string(), updateType: str, requestId: str })),
  mcp_status_changed: member('mcp_status_changed', () => ({
    servers: z.array(DroidMcpServerStatusSchema),
    summary: z.looseObject({}).optional(),
  })),
  mcp_auth_required: member('mcp_auth_required', () => ({ serverName: z.string(), authUrl: str, message: str, state: str })),
  mcp_auth_completed: member('mcp_auth_completed', () => ({ serverName: z.string(), outcome: str, message: str })),
  error: member('error', () => ({
    message: z.string(),
    errorType: str,
    timestamp: str,
    exitCode: z.number().optional(),
    error: z.looseObject({ name: str, message: str }).optional(),
  })),
  llm_retry: member('llm_retry', () => ({ attempt: z.number(), reason: str })),
  structured_output: member('structured_output', () => ({ messageId: z.string(), structuredOutput: z.unknown() })),
  session_compacted: member('session_compacted', () => ({
    summaryId: str,
    removedCount: z.number().optional(),
    visibleBoundaryMessageId: z.string().nullable().optional(),
  })),
  hook_execution_started: member('hook_execution_started', () => ({
    hookId: z.string(),
    hookEventName: z.string(),
    hookMatcher: str,
    hookCommands: z.array(z.unknown()).optional(),
    hookToolCallId: str,
    hookParentId: str,
  })),
  hook_execution_completed: member('hook_execution_completed', () => ({
    hookId: z.string(),
    hookEventName: str,
    hookMatcher: str,
    hookToolCallId: str,
    hookStatus: str,
    hookResults: z.array(z.unknown()).optional(),
  })),
  queued_messages_discarded: member('queued_messages_discarded', () => ({ text: str, requestId: str })),
  child_session_available: member('child_session_available', () => ({
    childSessionId: z.string(),
    toolUseId: str,
    subagentType: str,
    description: str,
  })),
  session_working_directory_changed: member('session_working_directory_changed', () => ({ cwd: z.string() })),
  loop_state_changed: member('loop_state_changed', () => ({ loopState: z.looseObject({}) })),
  mission_state_changed: member('mission_state_changed', () => ({})),
  mission_features_changed: member('mission_features_changed', () => ({})),
  mission_progress_entry: member('mission_progress_entry', () => ({})),
  mission_heartbeat: member('mission_heartbeat', () => ({})),
  mission_worker_started: member('mission_worker_started', () => ({})),
  mission_worker_completed: member('mission_worker_completed', () => ({})),
  /** droid 0.225 only. */
  mission_v2_snapshot_changed: member('mission_v2_snapshot_changed', () => ({})),
} as const;

type Schemas = typeof DROID_NOTIFICATION_SCHEMAS;
export type DroidNotificationType = keyof Schemas;
/** A known notification, discriminated by `type`. */
export type DroidNotification = { [K in DroidNotificationType]: z.infer<Schemas[K]> }[DroidNotificationType];
export type DroidNotificationOf<K extends DroidNotificationType> = z.infer<Schemas[K]>;

/** The params of `droid.session_notification`; `sessionId` is missing on several types (§6). */
export const SessionNotificationParamsSchema = lazySchema(() =>
  z.looseObject({
    sessionId: z.string().optional(),
    notification: z.looseObject({ type: z.string() }),
  }),
);

export type ParsedDroidNotification =
  | { kind: 'known'; sessionId: string | undefined; notification: DroidNotification }
  | { kind: 'unknown'; sessionId: string | undefined; type: string; raw: Record<string, unknown> }
  | { kind: 'malformed'; sessionId: string | undefined; type: string; raw: Record<string, unknown>; reason: string }
  | { kind: 'invalid'; reason: string };

/**
 * The types taken as they came when their quick check passes: the frequent ones whose projection
 * reads named fields only (or canonicalises through the schema where it digests or keeps a whole
 * object). The others are kept whole as `native` payloads, keyed by a digest of their JSON: the
 * schema's copy (declared keys first) is what they always were, so they keep going through it.
 */
export const QUICK_NOTIFICATION_TYPES: readonly DroidNotificationType[] = [
  'create_message',
  'assistant_text_delta',
  'assistant_text_complete',
  'thinking_text_delta',
  'thinking_text_complete',
  'tool_call',
  'tool_progress_update',
  'tool_execution_heartbeat',
  'tool_result',
  'permission_resolved',
  'droid_working_state_changed',
  'session_token_usage_changed',
  'agent_turn_completed',
  'hook_execution_started',
  'hook_execution_completed',
];

// One quick check per type above, compiled from its schema (core/schema-check.ts).
const QUICK_CHECKS = new Map<string, QuickCheck>(
  QUICK_NOTIFICATION_TYPES.map((type) => [type, compileQuickCheck(DROID_NOTIFICATION_SCHEMAS[type])]),
);

/** True when `type` names a notification this adapter knows. */
export function isDroidNotificationType(type: string): type is DroidNotificationType {
  return Object.hasOwn(DROID_NOTIFICATION_SCHEMAS, type);
}

/** Parses `droid.session_notification` params. Never throws. */
export function parseDroidNotification(params: unknown): ParsedDroidNotification {
  const fast = fastOuter(params);
  const outer = fast ? undefined : SessionNotificationParamsSchema.safeParse(params);
  if (outer && !outer.success) return { kind: 'invalid', reason: describeZodError(outer.error) };
  const { sessionId, notification: raw } = fast ?? outer!.data!;
  const type = raw.type;
  if (!isDroidNotificationType(type)) return { kind: 'unknown', sessionId, type, raw };
  // The frequent types pass their quick check (compiled from their schema, so the same rules)
  // and are taken as they came, without the schema building a copy. Anything the check is unsure
  // of goes through the schema, which also says what is wrong with a malformed one.
  const quick = QUICK_CHECKS.get(type);
  if (quick?.(raw)) return { kind: 'known', sessionId, notification: raw as DroidNotification };
  const parsed = DROID_NOTIFICATION_SCHEMAS[type].safeParse(raw);
  if (!parsed.success) return { kind: 'malformed', sessionId, type, raw, reason: describeZodError(parsed.error) };
  return { kind: 'known', sessionId, notification: parsed.data as DroidNotification };
}

type OuterParams = { sessionId: string | undefined; notification: Record<string, unknown> & { type: string } };

// The outer params checked by hand (the usual case, as SessionNotificationParamsSchema accepts
// them); undefined sends anything else through the schema, which says what is wrong.
function fastOuter(params: unknown): OuterParams | undefined {
  if (!isRecord(params)) return undefined;
  const { sessionId, notification } = params;
  if (sessionId !== undefined && typeof sessionId !== 'string') return undefined;
  if (!isRecord(notification) || typeof notification.type !== 'string') return undefined;
  return { sessionId, notification: notification as OuterParams['notification'] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A short, single-line account of the first few zod issues (paths and messages, no values). */
export function describeZodError(error: z.ZodError, maxIssues = 3): string {
  const parts = error.issues.slice(0, maxIssues).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(root)';
    return `${path}: ${issue.message}`;
  });
  const more = error.issues.length > maxIssues ? `; and ${error.issues.length - maxIssues} more` : '';
  return parts.join('; ') + more;
}
