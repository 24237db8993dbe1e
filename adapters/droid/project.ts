import { randomUUID } from 'node:crypto';
import type { EventDraft, TurnStatus, Usage } from '../../core/events/index.js';
import { parseDroidNotification, type DroidNotification, type DroidNotificationOf } from './notifications.js';
import { isHiddenMessage, outputText, readMessage } from './project/content.js';
import { agentError, assertNever, childSession, native, permissionResolved, progressDraft } from './project/drafts.js';
import { contentHash, droidEventKeys, toUsage } from './project/keys.js';
import { MessageKeys } from './project/message-keys.js';
import { TitleUpdates } from './project/titles.js';
import { ToolSpans } from './project/tool-spans.js';
import { TurnText } from './project/turn-text.js';
import { DroidMessageSchema, type DroidMessage } from './wire.js';

export { droidEventKeys } from './project/keys.js';
export { askedDraft, buildPermissionAsk, buildQuestionAsk, DROID_ANSWERS, droidChoices } from './project/permission-ask.js';

export interface DroidProjectorOptions {
  /** Canonical workspace path: tool labels show paths relative to it. */
  workspace: string;
  /**
   * Distinguishes this projector's counters from those of earlier child processes of the same
   * session (keys of facts without a native id: working states, settings, retries). Default: a
   * random id.
   */
  epoch?: string;
  /** The session has a title One Works chose: droid's automatic titles do not replace it. Default false. */
  manualTitle?: boolean;
}

/** What `agent_turn_completed` said, plus the turn's assistant text. */
export interface TurnCompletion {
  /** The native turn id: the id of the user message that started the turn. */
  turnId: string | undefined;
  /** droid's reason (`completed`, `cancelled`, `model_rate_limited`, …). */
  reason: string;
  status: TurnStatus;
  usage: Usage;
  text: string;
}

/**
 * Projects droid notifications into One Works event drafts. A pure, synchronous state machine:
 * no I/O, no timers; the caller emits what it returns, in order.
 */
export interface DroidProjector {
  /** Projects the params of one `droid.session_notification`. Never throws; unknown facts become `native`. */
  project(params: unknown): EventDraft[];
  /** Projects `load_session` history with the same keys the live projection gave those messages. */
  projectHistory(messages: readonly unknown[]): EventDraft[];
  /** `tool.result` (isError, closedBy `runtime`) for every open span; call when the child went away. */
  closeOpenSpans(reason: string): EventDraft[];
  /** Starts a turn whose user message id (= native turn id) the caller chose. */
  beginTurn(turnId: string): void;
  /** The assistant text of a turn (committed message preferred over deltas); `''` when unknown. */
  turnText(turnId?: string): string;
  /** The last `agent_turn_completed` not yet taken, then `undefined` until the next one. */
  takeCompletion(): TurnCompletion | undefined;
  /** Tool-use ids of spans opened and not yet closed. */
  openToolUseIds(): string[];
}

/** Creates a projector for one session (one per child process; history goes through `projectHistory`). */
export function createDroidProjector(options: DroidProjectorOptions): DroidProjector {
  return new Projector(options);
}

/** droid reasons → turn status: `completed` (also after a cancelled permission), `cancelled` → interrupted, anything else failed. */
export function turnStatusForReason(reason: string): TurnStatus {
  if (reason === 'completed' || reason === 'spec_handoff') return 'completed';
  if (reason === 'cancelled') return 'interrupted';
  return 'failed';
}

class Projector implements DroidProjector {
  readonly #epoch: string;
  readonly #spans: ToolSpans;
  readonly #keys = new MessageKeys();
  readonly #turns = new TurnText();
  readonly #hookEvents = new Map<string, string>();
  readonly #titles: TitleUpdates;
  #counter = 0;
  #lastWorkingState: string | undefined;
  #lastSettings: string | undefined;
  #completion: TurnCompletion | undefined;

  constructor(options: DroidProjectorOptions) {
    this.#epoch = options.epoch ?? randomUUID().slice(0, 8);
    this.#spans = new ToolSpans(options.workspace);
    this.#titles = new TitleUpdates(options.manualTitle ?? false);
  }

  project(params: unknown): EventDraft[] {
    const parsed = parseDroidNotification(params);
    switch (parsed.kind) {
      case 'known':
        return this.#known(parsed.notification);
      case 'unknown':
        return [native(parsed.type, parsed.raw)];
      case 'malformed':
        return [
          {
            type: 'log',
            key: `malformed:${parsed.type}:${contentHash(parsed.raw)}`,
            level: 'warn',
            message: `droid sent a ${parsed.type} notification of an unexpected shape (${parsed.reason}); kept as a native event`,
          },
          native(parsed.type, parsed.raw),
        ];
      case 'invalid':
        return [
          {
            type: 'log',
            key: `malformed:notification:${contentHash(params)}`,
            level: 'warn',
            message: `droid sent a session notification without a notification type (${parsed.reason}); kept as a native event`,
          },
          native('invalid_notification', params),
        ];
    }
  }

  projectHistory(messages: readonly unknown[]): EventDraft[] {
    const events: EventDraft[] = [];
    for (const raw of messages) {
      const parsed = DroidMessageSchema.safeParse(raw);
      if (parsed.success) events.push(...this.#message(parsed.data, undefined, false));
      else events.push(native('history_message', raw));
    }
    return events;
  }

  closeOpenSpans(reason: string): EventDraft[] {
    return this.#spans.closeOpen(reason);
  }

  beginTurn(turnId: string): void {
    this.#turns.begin(turnId);
  }

  turnText(turnId?: string): string {
    return this.#turns.text(turnId);
  }

  takeCompletion(): TurnCompletion | undefined {
    const completion = this.#completion;
    this.#completion = undefined;
    return completion;
  }

  openToolUseIds(): string[] {
    return this.#spans.openIds();
  }

  #next(prefix: string): string {
    this.#counter += 1;
    return `${prefix}:${this.#epoch}.${this.#counter}`;
  }

  #known(n: DroidNotification): EventDraft[] {
    switch (n.type) {
      case 'create_message':
        return this.#message(n.message, n.requestId, true);
      case 'assistant_text_delta':
      case 'thinking_text_delta':
        return this.#delta(n);
      case 'assistant_message_retracted': {
        const generation = this.#keys.retract(n.messageId);
        this.#turns.retract(n.messageId);
        return [
          {
            type: 'log',
            key: `retract:${n.messageId}:${generation}`,
            level: 'info',
            message: `droid retracted the partial reply ${n.messageId} before retrying`,
          },
        ];
      }
      case 'tool_call':
        return this.#spans.sight(n.toolUse.id, n.toolUse.name, n.toolUse.input);
      case 'tool_execution_phase_changed':
        if (n.phase === 'queued') return this.#spans.phase(n.toolUseId, n.toolName, 'queued');
        if (n.phase === 'executing') return this.#spans.phase(n.toolUseId, n.toolName, 'running');
        if (n.phase === 'streaming_input') return this.#spans.sight(n.toolUseId, n.toolName ?? 'unknown', undefined);
        // settled_* and future phases: the tool_result (or closeOpenSpans) closes the span.
        return [native(n.type, n)];
      case 'tool_progress_update':
        return progressDraft(n);
      case 'tool_result':
        return this.#spans.result(n.toolUseId, n.isError ?? false, outputText(n.content));
      case 'permission_resolved':
        return [permissionResolved(n)];
      case 'droid_working_state_changed':
        // droid repeats `idle` at the end of a turn; only changes are events.
        if (n.newState === this.#lastWorkingState) return [];
        this.#lastWorkingState = n.newState;
        return [{ type: 'working.changed', key: this.#next('working'), state: n.newState }];
      // Cumulative session totals: the totals themselves identify the fact across re-deliveries.
      case 'session_token_usage_changed': {
        const usage = toUsage(n.tokenUsage);
        const totals = [usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheCreationTokens, usage.thinkingTokens];
        return [{ type: 'usage', key: `usage:session:${totals.map((t) => t ?? '-').join('/')}`, scope: 'session', usage }];
      }
      case 'agent_turn_completed':
        return this.#turnCompleted(n);
      case 'settings_updated': {
        const snapshot = JSON.stringify(n.settings);
        if (snapshot === this.#lastSettings) return [];
        this.#lastSettings = snapshot;
        return [{ type: 'settings.changed', key: this.#next('settings'), settings: n.settings }];
      }
      case 'session_title_updated':
        return this.#titles.project(n);
      case 'hook_execution_started':
      case 'hook_execution_completed':
        return [this.#hook(n)];
      case 'child_session_available':
        return [childSession(n)];
      case 'error':
        return [agentError(n, () => this.#next('error'))];
      // droid also sends llm_retry after the LAST failed attempt (§9.2); the error and the turn's
      // reason that follow say when retrying stopped.
      case 'llm_retry':
        return [
          {
            type: 'log',
            key: `${this.#next('retry')}:${n.attempt}`,
            level: 'warn',
            message: `model call failed, retrying (attempt ${n.attempt}: ${n.reason ?? 'unknown'})`,
          },
        ];
      case 'queued_messages_discarded':
        return [
          {
            type: 'log',
            key: `discarded:${n.requestId ?? contentHash(n.text)}`,
            level: 'warn',
            message: `droid discarded queued user message(s) on interrupt${n.text ? `: ${n.text}` : ''}`,
          },
        ];
      // Dropped on purpose: the committed create_message carries the text the deltas streamed,
      // and heartbeats only say a tool is alive.
      case 'assistant_text_complete':
      case 'thinking_text_complete':
      case 'tool_execution_heartbeat':
        return [];
      // Kept as native facts: no One Works event type for them (yet).
      case 'structured_output':
      case 'session_compacted':
      case 'mcp_status_changed':
      case 'mcp_auth_required':
      case 'mcp_auth_completed':
      case 'session_working_directory_changed':
      case 'loop_state_changed':
      case 'mission_state_changed':
      case 'mission_features_changed':
      case 'mission_progress_entry':
      case 'mission_heartbeat':
      case 'mission_worker_started':
      case 'mission_worker_completed':
      case 'mission_v2_snapshot_changed':
        return [native(n.type, n)];
      default:
        return assertNever(n);
    }
  }

  // `live` is false for load_session history: same keys, no turn bookkeeping.
  #message(message: DroidMessage, requestId: string | undefined, live: boolean): EventDraft[] {
    if (isHiddenMessage(message)) return [];
    const parts = readMessage(message);
    const events: EventDraft[] = [];
    switch (message.role) {
      case 'assistant': {
        const key = this.#keys.commitKey(message.id);
        if (live) this.#turns.committed(message.id, parts.text);
        if (parts.text.length > 0 || parts.thinking.length > 0) {
          events.push({
            type: 'assistant.message',
            key,
            messageId: message.id,
            text: parts.text,
            ...(parts.thinking ? { thinking: parts.thinking } : {}),
          });
        }
        for (const use of parts.toolUses) events.push(...this.#spans.sight(use.id, use.name, use.input));
        return events;
      }
      case 'user':
      case 'tool': {
        for (const result of parts.toolResults) events.push(...this.#spans.result(result.toolUseId, result.isError, result.output));
        if (message.role === 'tool' || (parts.toolResults.length > 0 && parts.text.length === 0)) return events;
        if (live) this.#turns.userMessage(message.id);
        const payload = { messageId: message.id, text: parts.text, ...(requestId === undefined ? {} : { requestId }) };
        events.push({ type: 'native', key: droidEventKeys.message(message.id), nativeType: 'create_message.user', payload });
        return events;
      }
      case 'system':
        return [{ type: 'log', key: droidEventKeys.message(message.id), level: 'warn', message: parts.text }];
      default:
        // Kept whole in the schema's key order, whether the notification came through the schema or as it came.
        return [
          {
            type: 'native',
            key: droidEventKeys.message(message.id),
            nativeType: `create_message.${message.role}`,
            payload: DroidMessageSchema.parse(message),
          },
        ];
    }
  }

  #delta(n: DroidNotificationOf<'assistant_text_delta'> | DroidNotificationOf<'thinking_text_delta'>): EventDraft[] {
    if (n.textDelta.length === 0) return [];
    const thinking = n.type === 'thinking_text_delta';
    const key = this.#keys.deltaKey(n.messageId, n.blockIndex ?? 0, n.textDelta.length);
    if (!thinking) this.#turns.delta(n.messageId, n.blockIndex, n.textDelta);
    return [{ type: 'assistant.delta', key, messageId: n.messageId, text: n.textDelta, ...(thinking ? { thinking: true } : {}) }];
  }

  #turnCompleted(n: DroidNotificationOf<'agent_turn_completed'>): EventDraft[] {
    const { turnId, text } = this.#turns.complete(n.turnId);
    const usage = toUsage(n.tokenUsage);
    this.#completion = { turnId, reason: n.reason, status: turnStatusForReason(n.reason), usage, text };
    const key = turnId === undefined ? `${this.#next('turn')}:usage` : droidEventKeys.turnUsage(turnId);
    return [{ type: 'usage', key, scope: 'turn', usage }];
  }

  #hook(n: DroidNotificationOf<'hook_execution_started'> | DroidNotificationOf<'hook_execution_completed'>): EventDraft {
    const started = n.type === 'hook_execution_started';
    const event = n.hookEventName ?? this.#hookEvents.get(n.hookId) ?? 'unknown';
    if (started) this.#hookEvents.set(n.hookId, event);
    else this.#hookEvents.delete(n.hookId);
    const phase = started ? 'started' : 'completed';
    return {
      type: 'hook',
      key: droidEventKeys.hook(n.hookId, phase),
      hookId: n.hookId,
      event,
      phase,
      ...(!started && n.hookStatus !== undefined ? { status: n.hookStatus } : {}),
      ...(n.hookToolCallId !== undefined ? { toolUseId: n.hookToolCallId } : {}),
    };
  }
}
