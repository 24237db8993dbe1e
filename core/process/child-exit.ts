import type { ChildExit } from '../adapter.js';
import type { EventDraft, TurnOutcome } from '../events/index.js';

/** How a child ended, for a message: "was killed by SIGKILL" or "exited with code 1". */
export function exitWords(exit: ChildExit): string {
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
}

/** "; stderr: …" with the last 500 characters of a (redacted) stderr tail, or nothing when it is empty. */
export function stderrSuffix(tail: string | undefined): string {
  const trimmed = tail?.trim();
  return trimmed ? `; stderr: ${trimmed.slice(-500)}` : '';
}

/**
 * An agent process that ended during a turn: the `process_exited` error event to emit (under
 * `key`) and the turn's outcome: `interrupted` (reason `cancelled`) when the turn was being
 * interrupted, else `failed` (reason `process_exited`), with the text committed so far.
 */
export function exitedDuringTurn(
  agent: string,
  exit: ChildExit,
  stderrTail: string | undefined,
  turn: { key: string; interrupted: boolean; text: string },
): { event: EventDraft; outcome: TurnOutcome } {
  return {
    event: {
      type: 'error',
      key: turn.key,
      code: 'process_exited',
      message: `${agent} ${exitWords(exit)} before the turn completed${stderrSuffix(stderrTail)}`,
    },
    outcome: {
      status: turn.interrupted ? 'interrupted' : 'failed',
      reason: turn.interrupted ? 'cancelled' : 'process_exited',
      text: turn.text,
      usage: { reported: false },
    },
  };
}
