import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import { ERROR_CODES, OneWorksError, isOneWorksError, type ErrorCode } from '../../core/errors.js';
// The modules themselves, not core/orchestrator/index.js: a client never loads the orchestrator.
import { RequestKeySchema } from '../../core/orchestrator/request-keys.js';
import { MAX_READ_BYTES, MAX_READ_EVENTS } from '../../core/orchestrator/session-detail.js';
import { MAX_LABELS, MAX_LABEL_LENGTH, MAX_TITLE_LENGTH } from '../../core/orchestrator/session-metadata.js';
import { RECONCILED_STATUSES } from '../../core/session/reconcile.js';
import { AutonomySchema } from '../../core/store/index.js';
import { AskAnswerSchema, PermissionPolicySchema } from '../../core/permissions/index.js';
import { ProtocolError, type Envelope, type Inbound } from '../../core/protocol/index.js';

/**
 * The control socket's wire: NDJSON lines of JSON-RPC 2.0 (string ids), one connection per
 * client. Methods are the OrchestratorApi's names; `events.subscribe` makes the server send
 * `events.event` notifications `{ sessionId, event }`.
 */

export { logPath, socketPath } from './socket-path.js';

/** Longest single `wait` the server serves; clients loop for longer waits. */
export const MAX_WAIT_MS = 60_000;
/** The wire error code of every OneWorksError; `data.code` carries its stable string code. */
export const ONE_WORKS_WIRE_ERROR = -32000;
export const EVENT_NOTIFICATION = 'events.event';

// What every request that starts a turn carries first: the turn's settings and its idempotency key.
const turnRequestShape = () => ({
  model: z.string().min(1).optional(),
  effort: z.string().min(1).optional(),
  autonomy: AutonomySchema.optional(),
  requestKey: RequestKeySchema.optional(),
});
const SessionId = lazySchema(() => z.string().min(1).max(200));
const RunId = lazySchema(() => z.string().min(1));
// A person's note on a session (resolving its attention, reconciling a run).
const Note = lazySchema(() => z.string().max(2000).optional());
/** The client's presentation variables (core/process PRESENTATION_ENV_VARS), given to the agent of its turn. */
const Presentation = lazySchema(() =>
  z.strictObject({ TERM: z.string().optional(), COLORTERM: z.string().optional(), NO_COLOR: z.string().optional() }).optional(),
);

/** A method's params: a strict object (an unknown key is refused), built on first use (core/lazy-schema.ts). */
export function paramsSchema<Shape extends z.core.$ZodLooseShape>(shape: () => Shape): z.ZodLazy<z.ZodObject<Shape, z.core.$strict>> {
  return lazySchema(() => z.strictObject(shape()));
}

export const CreateSessionParamsSchema = paramsSchema(() => ({
  ...turnRequestShape(),
  adapter: z.string().min(1),
  workspace: z.string().min(1),
  // Checked by the orchestrator (checkPrompt), whose usage error names the rule.
  prompt: z.string(),
  title: z.string().optional(),
  labels: z.array(z.string()).optional(),
  policy: PermissionPolicySchema.optional(),
  presentation: Presentation,
  worktree: z
    .union([
      z.strictObject({
        base: z.string().min(1).optional(),
        at: z.string().min(1).optional(),
        branch: z.string().min(1).optional(),
        includeUncommitted: z.boolean().optional(),
      }),
      z.literal(false),
    ])
    .optional(),
}));
/** How a thin client's standard stream looks to the command the server runs for it. */
const ClientStreamSchema = z.strictObject({ isTTY: z.boolean(), columns: z.number().int().positive().optional() });
/**
 * `command.run`: a plain `run` command line that cli/bin.cjs hands to the orchestrator instead of
 * loading the command (cli/daemon/delegated-run.ts), with what the command would see of its
 * process. Its output comes as COMMAND_OUTPUT notifications before the answer, `{ exitCode }`, or
 * `{ declined }` with nothing printed (the client then runs the command itself). The environment
 * is the client's (this is a 0600 socket of the same user); it is never logged or recorded.
 */
export const CommandRunParamsSchema = paramsSchema(() => ({
  args: z.array(z.string()).max(256),
  cwd: z.string().min(1),
  env: z.record(z.string(), z.string()),
  stdout: ClientStreamSchema,
  stderr: ClientStreamSchema,
}));
/** `intent.adopt`: the command a `command.run` runs takes its client's intent over (cli/process-view.ts handedIntent). */
export const IntentAdoptParamsSchema = paramsSchema(() => ({ token: z.string().uuid() }));
/** `command.signal`: the client of a `command.run` on this connection got SIGINT or SIGTERM. */
export const CommandSignalParamsSchema = paramsSchema(() => ({ signal: z.enum(['SIGINT', 'SIGTERM']) }));

/**
 * `intent`: what a new `run` is about to create (core/orchestrator/intent.ts SessionIntent), sent
 * before its createSession on the same connection; an older server answers method-not-found
 * and the client goes on as before. Answered `{ intentId }` when an agent is starting, else `{ reason }`.
 */
export const IntentParamsSchema = paramsSchema(() => ({
  adapter: z.string().min(1).optional(),
  workspace: z.string().min(1),
  model: z.string().min(1).optional(),
  effort: z.string().min(1).optional(),
  autonomy: AutonomySchema.optional(),
  title: z.string().max(MAX_TITLE_LENGTH).optional(),
  labels: z.array(z.string().max(MAX_LABEL_LENGTH)).max(MAX_LABELS).optional(),
  presentation: Presentation,
}));
/** `intent.drop`: the client gives up the intent it told on this connection; answered `{ dropped }` once its agent is gone. */
export const IntentDropParamsSchema = paramsSchema(() => ({}));
export const SendMessageParamsSchema = paramsSchema(() => ({
  ...turnRequestShape(),
  sessionId: SessionId,
  prompt: z.string(),
  interrupt: z.boolean().optional(),
  presentation: Presentation,
  policy: PermissionPolicySchema.optional(),
}));
export const ListAsksParamsSchema = paramsSchema(() => ({ sessionId: SessionId.optional() }));
export const AnswerAskParamsSchema = AskAnswerSchema;
export const ResolveAttentionParamsSchema = paramsSchema(() => ({ sessionId: SessionId, note: Note }));
export const SessionParamsSchema = paramsSchema(() => ({ sessionId: SessionId }));
/**
 * Why a client asks an idle auto-started server to exit (`exitIfIdle`): it runs with another config
 * or environment (`mismatch`), or it started the server and no longer needs it (`unused`).
 */
export const ExitIfIdleParamsSchema = paramsSchema(() => ({ reason: z.enum(['mismatch', 'unused']).optional() }));
export type ExitReason = NonNullable<z.infer<typeof ExitIfIdleParamsSchema>['reason']>;
export const CancelParamsSchema = paramsSchema(() => ({ sessionId: SessionId, runId: RunId.optional() }));
export const WaitParamsSchema = paramsSchema(() => ({ sessionIds: z.array(SessionId).min(1), timeoutMs: z.number().int().min(0) }));
export const WaitForRunParamsSchema = paramsSchema(() => ({ sessionId: SessionId, runId: RunId }));
// The label alphabet is checked by the orchestrator, whose message says what is allowed.
export const UpdateSessionParamsSchema = paramsSchema(() => ({
  sessionId: SessionId,
  title: z.string().max(MAX_TITLE_LENGTH).optional(),
  labels: z.array(z.string().max(MAX_LABEL_LENGTH)).max(MAX_LABELS).optional(),
  archived: z.boolean().optional(),
}));
export const ReadSessionParamsSchema = paramsSchema(() => ({
  sessionId: SessionId,
  maxEvents: z.number().int().min(1).max(MAX_READ_EVENTS).optional(),
  maxBytes: z.number().int().min(1).max(MAX_READ_BYTES).optional(),
}));
export const ReconcileParamsSchema = paramsSchema(() => ({
  sessionId: SessionId,
  runId: RunId,
  status: z.enum(RECONCILED_STATUSES),
  note: Note,
}));
export const UsageParamsSchema = paramsSchema(() => ({ sessionIds: z.array(SessionId).optional() }));
export const AdapterParamsSchema = paramsSchema(() => ({ adapter: z.string().min(1) }));
export const ForkSessionParamsSchema = paramsSchema(() => ({
  ...turnRequestShape(),
  sessionId: SessionId,
  runId: RunId.optional(),
  prompt: z.string(),
  title: z.string().optional(),
}));
export const ImportSessionParamsSchema = paramsSchema(() => ({
  adapter: z.string().min(1),
  sourcePath: z.string().min(1),
  content: z.string(),
}));
export const DiffSessionParamsSchema = paramsSchema(() => ({ sessionId: SessionId, stat: z.boolean().optional() }));
export const MergeSessionParamsSchema = paramsSchema(() => ({
  sessionId: SessionId,
  squash: z.boolean().optional(),
  into: z.string().min(1).optional(),
}));
export const CheckSessionParamsSchema = paramsSchema(() => ({
  sessionId: SessionId,
  command: z.string().min(1),
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .max(2 ** 31 - 1),
}));
/** Handles are the orchestrator's own schema (core/orchestrator/turn-handle-schema.ts). */
export { TurnHandleSchema } from '../../core/orchestrator/turn-handle-schema.js';

/** The JSON-RPC 2.0 envelope of the control socket. */
export const controlEnvelope: Envelope = {
  request: (id, method, params) => ({ jsonrpc: '2.0', id, method, params }),
  notification: (method, params) => ({ jsonrpc: '2.0', method, params }),
  response: (id, result) => ({ jsonrpc: '2.0', id, result: result ?? null }),
  errorResponse: (id, error) => ({ jsonrpc: '2.0', id, error }),
  classify,
};

function classify(message: unknown): Inbound {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return { kind: 'invalid', reason: 'not an object' };
  const frame = message as Record<string, unknown>;
  const { id, method, params } = frame;
  if (id !== undefined && id !== null && typeof id !== 'string') return { kind: 'invalid', reason: 'id is not a string' };
  if (typeof method === 'string')
    return typeof id === 'string' ? { kind: 'request', id, method, params } : { kind: 'notification', method, params };
  if ('result' in frame && typeof id === 'string') return { kind: 'response', id, result: frame.result };
  const error = frame.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  if (typeof error === 'object' && error !== null && typeof error.code === 'number' && typeof error.message === 'string') {
    return { kind: 'error', id: id ?? null, error: { code: error.code, message: error.message, data: error.data } };
  }
  return { kind: 'invalid', reason: 'neither request, notification nor response' };
}

/** Parses handler params; a mismatch is answered with -32602 naming the problem. */
export function parseParams<T>(schema: z.ZodType<T>, params: unknown): T {
  const parsed = schema.safeParse(params);
  if (!parsed.success) throw ProtocolError.invalidParams(`invalid params: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** A handler failure as sent: OneWorksErrors keep their code (message redacted), others become `internal`. */
export function toWire(error: unknown, redact: (text: string) => string): ProtocolError {
  if (error instanceof ProtocolError) return error;
  const code: ErrorCode = isOneWorksError(error) ? error.code : ERROR_CODES.INTERNAL;
  const message = error instanceof Error ? error.message : String(error);
  return new ProtocolError(ONE_WORKS_WIRE_ERROR, redact(message), { code });
}

const KNOWN_CODES = new Set<string>(Object.values(ERROR_CODES));

/**
 * On the client: a `peer_error` the server built with {@link toWire} becomes the OneWorksError
 * it was (same code and message); anything else is returned unchanged.
 */
export function fromWire(error: unknown): unknown {
  if (!isOneWorksError(error) || error.code !== ERROR_CODES.PEER_ERROR) return error;
  const data = error.data as { code?: unknown; message?: unknown; data?: { code?: unknown } } | undefined;
  const code = data?.data?.code;
  if (data?.code === ONE_WORKS_WIRE_ERROR && typeof code === 'string' && KNOWN_CODES.has(code) && typeof data.message === 'string') {
    return new OneWorksError(code as ErrorCode, data.message);
  }
  return error;
}
