import type { PresentationEnv } from '../process/index.js';
import type { RunRecord } from '../store/index.js';
import { isWriter } from './admission.js';
import { cancelQueued } from './cancellation.js';
import { loadSlot, type OrchestratorContext } from './orchestrator-context.js';
import { normalizeRequestArgs } from './request-keys.js';
import { Turn, type SessionSlot } from './session-slot.js';
import { completeHandle, type PendingTurn } from './turn-handles.js';
import type { EffectiveSettings, TurnHandle } from './types.js';

/**
 * Accepting a turn (createSession, sendMessage): claiming and settling its request key, recording
 * it as queued, handing it to admission, and undoing all of that when the record cannot be
 * written.
 */

/** Makes a request key's pre-assigned turn ids durable; the queued record is written after it. */
export type Reserve = (pending: PendingTurn) => Promise<void>;

/** How {@link acceptTurn} accepts a turn. */
export interface AcceptOptions {
  /** Supersedes the session's queued turns and cancels its live one (sendMessage `interrupt`). */
  interrupt: boolean;
  /** launchNotes, emitted after `turn.queued` as warn log events for the client to show. */
  notes: string[];
  /** A request key's reservation; absent without a request key. */
  reserve?: Reserve | undefined;
  /** The client's presentation variables for the agent of this turn. */
  presentation?: PresentationEnv | undefined;
}

/**
 * Records the turn as queued and hands it to admission. The bounds are checked first, so a
 * refused turn (queue_full) leaves no trace; a started turn waits for its record to be written.
 * A failed write is undone in memory (admission, the slot's turns, the queued run, a new
 * session's slot) and rethrown, so nothing waits for a turn the caller was told failed. `slot`
 * joins `ctx.slots` when it is new (createSession).
 */
export async function acceptTurn(
  ctx: OrchestratorContext,
  slot: SessionSlot,
  prompt: string,
  settings: EffectiveSettings,
  options: AcceptOptions,
): Promise<TurnHandle> {
  const record = slot.book.record;
  const turn = new Turn(record.id, `r${record.runs.length + 1}`, prompt, settings, options.presentation);
  ctx.admission.enqueue({ turnId: turn.turnId, sessionId: record.id, workspace: record.workspace, writer: isWriter(settings.autonomy) });
  const isNew = !ctx.slots.has(slot.id);
  ctx.slots.set(slot.id, slot);
  slot.turns.set(turn.runId, turn);
  const queued: RunRecord = { id: turn.runId, prompt: ctx.redactor.redact(prompt), ...settings, status: 'queued' };
  const reserved = options.reserve?.({ sessionId: slot.id, runId: turn.runId });
  turn.recorded = slot.book.update((current) => ({ ...current, runs: [...current.runs, queued] }), reserved);
  slot.book.emit({ type: 'turn.queued', key: `turn:${turn.runId}:queued`, runId: turn.runId, prompt });
  for (const [index, note] of options.notes.entries()) {
    slot.book.emit({ type: 'log', key: `turn:${turn.runId}:note:${index}`, level: 'warn', message: `note: ${note}` });
  }
  try {
    await turn.recorded;
  } catch (error) {
    // A turn admission started meanwhile releases itself (executeTurn sees `recorded` reject).
    ctx.admission.cancelQueued(turn.turnId);
    slot.turns.delete(turn.runId);
    slot.book.forgetRun(turn.runId);
    if (isNew) ctx.slots.delete(slot.id);
    ctx.changed();
    throw error;
  }
  if (options.interrupt) {
    await cancelQueued(slot, ctx.admission.supersede(slot.id, turn.turnId), 'superseded');
    for (const other of slot.turns.values()) if (other !== turn && ctx.admission.stateOf(other.turnId) === 'live') other.requestCancel();
  }
  ctx.pump();
  return { sessionId: slot.id, runId: turn.runId, state: ctx.admission.stateOf(turn.turnId) === 'live' ? 'running' : 'queued', settings };
}

/**
 * Steering with an agent that can be steered (AdapterSession.steer, capability `steering`): a
 * `send --interrupt` whose settings are the live turn's gives its message to the live turn
 * instead of interrupting it; the session's queued turns are superseded as for an interrupt.
 * Returns the live turn's handle (the caller follows that run), or undefined when there is no
 * live turn with a runner, the settings differ, or the agent did not take the message: then the
 * caller interrupts and queues as before.
 */
export async function steerLiveTurn(
  ctx: OrchestratorContext,
  slot: SessionSlot,
  prompt: string,
  settings: EffectiveSettings,
): Promise<TurnHandle | undefined> {
  const runner = slot.runner;
  const live = [...slot.turns.values()].find((turn) => ctx.admission.stateOf(turn.turnId) === 'live');
  if (!runner || !live || live.cancelRequested) return undefined;
  const same =
    live.settings.model === settings.model && live.settings.effort === settings.effort && live.settings.autonomy === settings.autonomy;
  if (!same || (await runner.steer(prompt)) !== live.runId) return undefined;
  await cancelQueued(slot, ctx.admission.supersede(slot.id), 'superseded');
  ctx.pump();
  return { sessionId: slot.id, runId: live.runId, state: 'running', settings: live.settings };
}

/**
 * Runs `make` once per request key: without a key it just runs; with one, `ctx.keys` returns the
 * first call's handle for a repeat with the same arguments (`request_key_conflict` for other
 * arguments) and `make` gets the key's {@link Reserve}. A handle stored without settings gets
 * them from its run (completeHandle).
 */
export async function withRequestKey(
  ctx: OrchestratorContext,
  requestKey: string | undefined,
  args: Record<string, unknown>,
  make: (reserve?: Reserve) => Promise<TurnHandle>,
): Promise<TurnHandle> {
  if (requestKey === undefined) return make();
  const handle = await ctx.keys.claim(requestKey, normalizeRequestArgs(args), make);
  if (handle.settings) return { ...handle, settings: handle.settings };
  const { record } = (await loadSlot(ctx, handle.sessionId)).book;
  return completeHandle(handle, record, () => ctx.deps.defaultsFor(record.adapter).autonomy);
}
