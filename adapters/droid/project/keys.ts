import { createHash } from 'node:crypto';
import type { Usage } from '../../../core/events/index.js';
import type { DroidTokenUsage } from '../wire.js';

/**
 * Event keys derived from droid's native identifiers. The session layer writes a key once, so a
 * re-delivered notification, history replayed by `load_session`, or the duplicate `tool_result`
 * of an interrupt all collapse into one recorded event. The session layer uses the same helpers
 * for the events it emits itself (permission and question decisions), so that droid's echo of a
 * decision (`permission_resolved`) and our own record of it share a key.
 */
export const droidEventKeys = {
  /** An assistant/user/system message (`create_message`, or a history message). */
  message: (messageId: string): string => `msg:${messageId}`,
  /** One phase of a tool span: `open`, `input`, `queued`, `running`, `result`. */
  tool: (toolUseId: string, phase: 'open' | 'input' | 'queued' | 'running' | 'result'): string => `tool:${toolUseId}:${phase}`,
  /** `droid.request_permission` as asked. */
  permissionRequested: (requestId: string): string => `perm:${requestId}:requested`,
  /** The decision on a permission request, whoever recorded it first (policy, person, or droid's echo). */
  permissionDecided: (requestId: string): string => `perm:${requestId}:decided`,
  questionAsked: (requestId: string): string => `question:${requestId}:asked`,
  questionAnswered: (requestId: string): string => `question:${requestId}:answered`,
  /** The usage of one turn (`agent_turn_completed.turnId`). */
  turnUsage: (turnId: string): string => `turn:${turnId}:usage`,
  hook: (hookId: string, phase: 'started' | 'completed'): string => `hook:${hookId}:${phase}`,
} as const;

/** A short, stable digest of a JSON value (for keys of facts that carry no native id). */
export function contentHash(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value) ?? 'undefined')
    .digest('hex')
    .slice(0, 12);
}

/** Converts droid token counts; absent counts → `{reported:false}` (never zeros that look free). */
export function toUsage(tokens: DroidTokenUsage | undefined): Usage {
  if (tokens === undefined) return { reported: false };
  const usage: Usage = { reported: true };
  const put = (field: Exclude<keyof Usage, 'reported'>, value: number | undefined): void => {
    if (value !== undefined && Number.isFinite(value)) usage[field] = Math.max(0, Math.round(value));
  };
  put('inputTokens', tokens.inputTokens);
  put('outputTokens', tokens.outputTokens);
  put('cacheReadTokens', tokens.cacheReadTokens);
  put('cacheCreationTokens', tokens.cacheCreationTokens);
  put('thinkingTokens', tokens.thinkingTokens);
  return usage;
}
