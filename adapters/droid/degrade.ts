import type { RuntimeEventType } from '../../core/events/index.js';
import { ERROR_CODES, isOneWorksError } from '../../core/errors.js';

/**
 * What the droid session's degradation (session.ts) counts. A transport failure is droid going
 * away or not answering: it exited, closed its output, or a request timed out. Version
 * mismatches, refused loads, malformed results and bad configuration are not: they end the
 * session explicitly, as before, whatever `adapters.droid.fallback` says.
 */
const TRANSPORT_CODES: ReadonlySet<string> = new Set([
  ERROR_CODES.PROCESS_EXITED,
  ERROR_CODES.CONNECTION_CLOSED,
  ERROR_CODES.REQUEST_TIMEOUT,
]);

/** True for a transport failure, also when it made a `load_session` fail (session_load_failed with such a cause). */
export function isTransportFailure(error: unknown): boolean {
  if (!isOneWorksError(error)) return false;
  if (TRANSPORT_CODES.has(error.code)) return true;
  return error.code === ERROR_CODES.SESSION_LOAD_FAILED && isTransportFailure(error.cause);
}

/**
 * Events that show something of a turn happened: assistant text (or thinking), a tool span, a
 * permission ask or question, a hook that ran, a sub-session. A turn with any of them is never
 * sent again after droid went away.
 */
export const OBSERVED_TYPES: ReadonlySet<RuntimeEventType> = new Set<RuntimeEventType>([
  'assistant.delta',
  'assistant.message',
  'tool.call',
  'tool.progress',
  'tool.result',
  'permission.requested',
  'question.asked',
  'hook',
  'child_session',
]);
