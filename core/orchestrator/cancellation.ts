import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { Admission } from './admission.js';
import type { SessionSlot } from './session-slot.js';
import { cancelRuns } from './session-summary.js';

/**
 * Cancelling turns: dropping queued ones (cancel, interrupt, a failed predecessor) and the
 * `cancel` operation over a session or one of its runs.
 */

/**
 * Forgets the slot's turns among `requests` (already out of admission), records their runs as
 * `cancelled` with `reason`, logs it, and once the slot has no turn left closes its runner.
 * Resolves when the record is written; nothing to do for no requests.
 */
export async function cancelQueued(slot: SessionSlot, requests: ReadonlyArray<{ turnId: string }>, reason: string): Promise<void> {
  if (requests.length === 0) return;
  const runIds = new Set([...slot.turns.values()].filter((t) => requests.some((r) => r.turnId === t.turnId)).map((t) => t.runId));
  for (const runId of runIds) slot.turns.delete(runId);
  const write = slot.book.update((record) => cancelRuns(record, runIds, reason, new Date().toISOString()));
  slot.book.emit({
    type: 'log',
    key: `runs:${[...runIds].join(',')}:${reason}`,
    level: 'info',
    message: `run ${[...runIds].join(', ')} cancelled: ${reason}`,
  });
  await write;
  // A runner kept open for these turns is no longer needed.
  if (slot.turns.size === 0) await slot.closeRunner('idle');
}

/**
 * `cancel` of the session `sessionId` (whose slot is `slot`): without `runId` every queued and live turn of the session, with it only that run's
 * turn (nothing when it already ended). Queued turns become `cancelled` at once; live ones are
 * asked to cancel and awaited until released, then the book is flushed. Throws `usage` when the
 * session never had `runId`.
 */
export async function cancelTurns(admission: Admission, slot: SessionSlot, sessionId: string, runId?: string): Promise<void> {
  if (runId !== undefined && !slot.book.record.runs.some((run) => run.id === runId)) {
    throw new OneWorksError(ERROR_CODES.USAGE, `session ${sessionId} has no run ${runId}`, { data: { sessionId, runId } });
  }
  const only = runId === undefined ? undefined : slot.turns.get(runId);
  if (runId !== undefined && !only) return;
  const queued = only ? [admission.cancelQueued(only.turnId)].filter((r) => r !== undefined) : admission.dropSession(sessionId);
  await cancelQueued(slot, queued, 'cancelled');
  const live = only ? (slot.turns.has(only.runId) ? [only] : []) : [...slot.turns.values()];
  for (const turn of live) turn.requestCancel();
  await Promise.all(live.map((turn) => turn.done));
  await slot.book.flush();
}
