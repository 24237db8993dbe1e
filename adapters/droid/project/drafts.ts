import type { EventDraft } from '../../../core/events/index.js';
import { ToolProgressSchema, type DroidNotificationOf } from '../notifications.js';
import { contentHash, droidEventKeys } from './keys.js';

/** Stateless notification → draft mappings of the droid projector. */

/** A native fact kept as is; the key is a digest of its content, so an identical re-delivery collapses. */
export function native(nativeType: string, payload: unknown): EventDraft {
  return { type: 'native', key: `native:${nativeType}:${contentHash(payload)}`, nativeType, payload };
}

/**
 * droid echoes every decision, including its own `cancel` on an interrupt. The key is the one
 * the session layer gives its own record of the decision (`droidEventKeys.permissionDecided`),
 * so only the first of the two is kept; droid's own cancel, which no one else records, stays.
 */
export function permissionResolved(n: DroidNotificationOf<'permission_resolved'>): EventDraft {
  return {
    type: 'permission.decided',
    key: droidEventKeys.permissionDecided(n.requestId),
    requestId: n.requestId,
    decision: n.selectedOption === 'cancel' ? 'deny' : 'allow',
    // droid's own answer in One Works terms: a cancel is a deny, any proceed_* an allow this once.
    option: n.selectedOption === 'cancel' ? 'deny' : 'allow-once',
    nativeOption: n.selectedOption,
    by: 'agent',
  };
}

export function childSession(n: DroidNotificationOf<'child_session_available'>): EventDraft {
  return {
    type: 'child_session',
    key: `child:${n.childSessionId}`,
    childSessionId: n.childSessionId,
    ...(n.toolUseId !== undefined ? { toolUseId: n.toolUseId } : {}),
    ...(n.description !== undefined ? { description: n.description } : {}),
  };
}

/** droid's `error` notification (the session survives it; the turn ends with its own reason). */
export function agentError(n: DroidNotificationOf<'error'>, fallbackKey: () => string): EventDraft {
  const name = n.error?.name;
  const message = name && name !== 'Error' ? `${n.message} (${name})` : n.message;
  const key = n.timestamp === undefined ? fallbackKey() : `error:${n.timestamp}:${contentHash(n.message)}`;
  return { type: 'error', key, code: 'agent_error', message };
}

/**
 * Tool output while it runs: Execute sends `text` = a short tail window of the output (and
 * `fullOutput`); the first status of a run has empty text. An update without any text is dropped.
 */
export function progressDraft(n: DroidNotificationOf<'tool_progress_update'>): EventDraft[] {
  const { update } = n;
  const error = typeof update.error === 'string' ? update.error : undefined;
  const text = update.text || error || update.status || '';
  if (text.length === 0) return [];
  // Digested in the schema's key order, whether the notification came through the schema or as it came.
  const stamp = update.timestamp ?? contentHash(ToolProgressSchema.parse(update));
  return [{ type: 'tool.progress', key: `tool:${n.toolUseId}:progress:${stamp}`, toolUseId: n.toolUseId, text }];
}

export function assertNever(value: never): never {
  throw new Error(`unhandled droid notification ${JSON.stringify(value)}`);
}
