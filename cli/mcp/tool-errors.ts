import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ERROR_CODES, isOneWorksError } from '../../core/errors.js';
import { maskUuids } from './native-ids.js';
import type { ToolErrorOut } from './schemas.js';

/** What a code means for the caller: whether to retry unchanged, and what to do. */
export interface CodeAdvice {
  retryable: boolean;
  action: string;
}

const DOCTOR = 'Run `one-works doctor` on the host running One Works and fix what it reports, then retry.';

// One sentence per stable code; codes without an entry fall back to DEFAULT.
const ADVICE: Record<string, CodeAdvice> = {
  [ERROR_CODES.ASK_ALREADY_ANSWERED]: {
    retryable: false,
    action: 'Someone else answered this ask first (the message says who); their decision stands. read_session shows the outcome.',
  },
  [ERROR_CODES.ASK_NOT_FOUND]: {
    retryable: false,
    action: 'The ask is no longer open (answered, timed out, or its turn ended); list_asks shows the open ones.',
  },
  [ERROR_CODES.WORKSPACE_NOT_APPROVED]: {
    retryable: false,
    action:
      'Use a workspace inside one of the approved roots listed by list_workspaces (or ask the owner to add its root to workspaces.approved in one-works.yaml).',
  },
  [ERROR_CODES.QUEUE_FULL]: {
    retryable: true,
    action: 'Nothing was accepted: wait for sessions to settle (wait_for_sessions), then retry the same call with the same requestKey.',
  },
  [ERROR_CODES.REQUEST_KEY_CONFLICT]: {
    retryable: false,
    action: 'Repeat the original arguments exactly to get the original handle, or use a new requestKey for a different request.',
  },
  [ERROR_CODES.MODEL_UNAVAILABLE]: {
    retryable: false,
    action: "Choose a model listed by the models tool, or omit model to use the session's or adapter's default.",
  },
  [ERROR_CODES.EFFORT_UNSUPPORTED]: { retryable: false, action: 'Choose an effort the model lists in the models tool, or omit effort.' },
  [ERROR_CODES.EFFORT_REQUIRED]: { retryable: false, action: 'Pass an explicit effort that the new model supports (see the models tool).' },
  [ERROR_CODES.SESSION_UNKNOWN_OUTCOME]: {
    retryable: false,
    action: 'The last turn may or may not have taken effect: read the session (read_session) and check the workspace before sending again.',
  },
  [ERROR_CODES.SESSION_NOT_FOUND]: { retryable: false, action: 'Check the session id; find_sessions lists the known sessions.' },
  [ERROR_CODES.WORKSPACE_BUSY]: {
    retryable: true,
    action: 'Wait for the turn (or merge) named in the message to end (wait_for_sessions), then merge again; nothing was changed.',
  },
  [ERROR_CODES.SESSION_BUSY]: {
    retryable: true,
    action: 'Wait for the live turn (wait_for_sessions), or send with interrupt: true to steer it.',
  },
  [ERROR_CODES.SESSION_LOAD_FAILED]: {
    retryable: false,
    action: 'The agent could not resume this conversation and did not replace it: start a new session (create_session).',
  },
  [ERROR_CODES.USAGE]: { retryable: false, action: 'Fix the arguments as the message says and call again.' },
  [ERROR_CODES.CONNECTION_CLOSED]: {
    retryable: true,
    action: 'Retry: the orchestrator is started again on the next call. If it keeps failing, read <state>/orchestrator.log on the host.',
  },
  [ERROR_CODES.REQUEST_TIMEOUT]: {
    retryable: true,
    action: 'Retry the call; use a requestKey so that a repeated create or send is not run twice.',
  },
  [ERROR_CODES.STATE_LOCKED]: {
    retryable: true,
    action: 'Another One Works process owns the state directory; retry shortly, or stop the other process.',
  },
  [ERROR_CODES.STATE_CORRUPT]: {
    retryable: false,
    action: 'A state file is malformed; the host owner must inspect the state directory named in the message.',
  },
  [ERROR_CODES.STATE_UNWRITABLE]: {
    retryable: false,
    action:
      'The host cannot write its state directory (disk full, quota or permissions); the host owner must free space or fix it, then retry.',
  },
  [ERROR_CODES.STATE_UNAVAILABLE]: {
    retryable: true,
    action: 'The state database does not answer; retry once it is back (the host owner checks state.postgres.url and the database).',
  },
  [ERROR_CODES.STATE_SCHEMA_NEWER]: {
    retryable: false,
    action: 'The state database was migrated by a newer One Works; the host owner must upgrade One Works.',
  },
  [ERROR_CODES.CATALOG_UNAVAILABLE]: {
    retryable: true,
    action: 'Nothing was accepted: the model catalog could not be listed in time; retry the same call with the same requestKey.',
  },
  [ERROR_CODES.ORCHESTRATOR_STOPPING]: {
    retryable: true,
    action: 'The orchestrator is shutting down: retry shortly with the same requestKey (the next call starts a new one).',
  },
  [ERROR_CODES.ORCHESTRATOR_UNAVAILABLE]: {
    retryable: false,
    action:
      'The orchestrator on the host is stopped, hung or failed to start: the message names the process and how to resume or stop it. The host owner must act before a retry can succeed.',
  },
  [ERROR_CODES.ORCHESTRATOR_MISMATCH]: {
    retryable: false,
    action:
      'The running orchestrator was started with a different configuration or environment than this MCP server: stop it once its turns are done (the message says how), or run the MCP server with the same config and environment, then retry.',
  },
  [ERROR_CODES.CONFIG_INVALID]: { retryable: false, action: 'Fix one-works.yaml as the message says, then restart the MCP server.' },
  [ERROR_CODES.CONFIG_NOT_FOUND]: { retryable: false, action: 'Create one-works.yaml (or pass --config) and restart the MCP server.' },
  [ERROR_CODES.CLI_NOT_FOUND]: { retryable: false, action: DOCTOR },
  [ERROR_CODES.UNSUPPORTED_CLI_VERSION]: { retryable: false, action: DOCTOR },
  [ERROR_CODES.INSTALL_FAILED]: { retryable: true, action: "Check the host's network access to the npm registry, then retry." },
  [ERROR_CODES.PROTOCOL_MISMATCH]: { retryable: false, action: DOCTOR },
  [ERROR_CODES.PROCESS_EXITED]: { retryable: false, action: 'Read the session (read_session) to see what ran, then send again.' },
  [ERROR_CODES.INTERNAL]: { retryable: false, action: "Retry once; if it fails again, report it with the MCP server's log (stderr)." },
};
const DEFAULT: CodeAdvice = { retryable: false, action: 'Read the message; if the problem persists, run `one-works doctor` on the host.' };

/** The generic message of an unexpected failure; its details go to the local log only. */
export const INTERNAL_MESSAGE = 'internal error in the One Works MCP server; the details are in its local log';

/**
 * A failed tool call as an MCP result: `isError: true`, structured `{ error: { code, message,
 * retryable, action } }` and the same in one line of text. OneWorksErrors keep their stable code
 * and (redacted, native ids masked) message; anything else, and `internal` ones, become code
 * `internal` with a generic message, their details written to `log` (redacted by the caller's log).
 */
export function toolErrorResult(error: unknown, redact: (text: string) => string, log: (line: string) => void): CallToolResult {
  const known = isOneWorksError(error) && error.code !== ERROR_CODES.INTERNAL;
  if (!known) log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  const code = known ? error.code : ERROR_CODES.INTERNAL;
  const message = known ? maskUuids(redact(error.message)) : INTERNAL_MESSAGE;
  const advice = ADVICE[code] ?? DEFAULT;
  const structured: ToolErrorOut = { error: { code, message, retryable: advice.retryable, action: advice.action } };
  return { isError: true, content: [{ type: 'text', text: `${code}: ${message} — ${advice.action}` }], structuredContent: structured };
}

/** The advice for a code. */
export function adviceFor(code: string): CodeAdvice {
  return ADVICE[code] ?? DEFAULT;
}

/** Every code with specific advice, in declaration order, and the fallback last (for docs/TOOLS.md). */
export const ADVICE_TABLE: ReadonlyArray<readonly [string, CodeAdvice]> = [...Object.entries(ADVICE), ['(any other)', DEFAULT]];
