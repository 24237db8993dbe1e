import { isOneWorksError } from '../errors.js';
import type { TurnOutcome } from '../events/index.js';
import { withPresentation, type PresentationEnv } from '../process/index.js';
import { SessionRunner } from '../session/index.js';
import type { SessionRecord, Store } from '../store/index.js';
import type { Admission, TurnRequest } from './admission.js';
import type { OrchestratorDeps } from './orchestrator-deps.js';
import type { SessionSlot, Turn } from './session-slot.js';
import { isTerminal, outcomeOfRun } from './session-summary.js';
import type { WarmAgents } from './warm-agents.js';

/** How long a warm agent may take to answer the liveness check before its session's next turn, in ms. */
export const READY_TIMEOUT_MS = 2_000;

/** How old a liveness check started as the turn was accepted may be when the turn starts, in ms; older ones are made again. */
export const READY_AHEAD_FRESH_MS = 1_000;

/** What running one admitted turn needs from the orchestrator. */
export interface TurnExecution {
  slot: SessionSlot;
  turn: Turn;
  admission: Admission;
  /** The RunnerStore every runner is given. */
  store: Store;
  deps: OrchestratorDeps;
  /** Where a completed turn's agent waits for the session's next turn. */
  warm: WarmAgents;
  closing: () => boolean;
  cancelQueued: (requests: ReadonlyArray<Readonly<TurnRequest>>, reason: string) => Promise<void>;
}

/**
 * Runs one turn that admission started, and releases it. Order matters: the terminal result is
 * persisted (by the runner, or here when no runner could run it), a failure drops the queued
 * turns behind it (`predecessor_failed`), the runner stays attached when the session's next
 * turn is queued, is parked warm after a completed turn (closed in the background when it may
 * not stay warm) and is closed otherwise; then the slot and the lock are released. The caller
 * waiting for the run is never held up by an agent's close. Never rejects.
 */
export async function executeTurn(x: TurnExecution): Promise<void> {
  const { slot, turn } = x;
  let outcome: TurnOutcome | undefined;
  try {
    await turn.recorded;
  } catch {
    // Never accepted: the caller got the write's error and the orchestrator undid the turn.
    slot.turns.delete(turn.runId);
    x.admission.release(turn.turnId);
    return;
  }
  try {
    if (turn.cancelRequested) {
      await slot.book.update((record) => endRun(record, turn.runId, 'cancelled', 'cancelled'));
    } else {
      const runner = await openRunner(x);
      if (turn.cancelRequested) {
        await slot.book.update((record) => endRun(record, turn.runId, 'cancelled', 'cancelled'));
      } else {
        // The turn's settings as accepted: an undefined model or effort is the agent's default, never the previous run's.
        const { model, effort, autonomy } = turn.settings;
        outcome = await runner.runTurn(turn.prompt, { model, effort, autonomy }, turn.abort.signal);
        if (outcome.status === 'completed') await renameAfterFirstTurn(slot, turn, runner);
      }
    }
  } catch (error) {
    const code = isOneWorksError(error) ? error.code : 'internal';
    const recorded = slot.book.record.runs.find((run) => run.id === turn.runId);
    if (recorded && isTerminal(recorded.status)) {
      // The turn ran to its end but writing its outcome failed (a full disk): the book holds it
      // and writes it again with its next change or flush (a graceful stop flushes).
      outcome = outcomeOfRun(recorded);
    } else {
      // The runner could not be opened: the turn failed before it began.
      outcome = { status: 'failed', reason: code, text: '', usage: { reported: false } };
      await slot.book
        .update((record) => ({
          ...endRun(record, turn.runId, 'failed', code),
          status: 'needs_attention',
          attention: [...(record.attention ?? []), `run ${turn.runId} failed before it started: ${code}`],
        }))
        .catch(() => undefined);
    }
  }
  try {
    if (outcome && (outcome.status === 'failed' || outcome.status === 'unknown')) {
      const dropped = x.admission.dropSession(slot.id);
      if (dropped.length > 0) {
        const ids = dropped.map((request) => request.turnId.slice(slot.id.length + 1));
        await x.cancelQueued(dropped, 'predecessor_failed');
        await slot.book.update((record) => ({
          ...record,
          status: 'needs_attention',
          attention: [...(record.attention ?? []), `run ${ids.join(', ')} not submitted: run ${turn.runId} ended ${outcome!.status}`],
        }));
      }
    }
    if (outcome?.status !== 'completed' || x.closing()) {
      x.warm.retire(slot, 'idle');
    } else if (![...slot.turns.values()].some((t) => t !== turn)) {
      x.warm.park(slot);
    }
  } catch {
    // Cleanup failures leave the record as the runner wrote it; the slot is released regardless.
  } finally {
    await slot.book.flush().catch(() => undefined);
    slot.turns.delete(turn.runId);
    x.admission.release(turn.turnId);
  }
}

// A session created with a title gets it natively once its first turn completed, while the
// child is still up. Best effort: renameNative never throws and logs its failures itself; the
// One Works title and the recorded outcome stay as they are.
async function renameAfterFirstTurn(slot: SessionSlot, turn: Turn, runner: SessionRunner): Promise<void> {
  const { title, runs } = slot.book.record;
  if (title && runs[0]?.id === turn.runId) await runner.renameNative(title).catch(() => false);
}

// The slot's runner, opened (or reopened) so that its history ends right before this turn's run.
// A kept runner (warm, or left attached for this queued turn) is given the turn only when its
// history matches, its adapter can apply the turn's settings to the running agent, and a warm
// agent still answers; otherwise it is closed (recorded with why) and a fresh one opened, so a
// turn never fails because its warm agent had silently gone.
async function openRunner(x: TurnExecution): Promise<SessionRunner> {
  const { slot, turn } = x;
  const wasWarm = x.warm.take(slot.id);
  // An agent started as the session was created (createSession) is this turn's own, just started:
  // no liveness round trip before its first prompt (the runner waits for its start itself).
  const startedForTurn = slot.startedForFirstTurn;
  slot.startedForFirstTurn = false;
  // A warm agent's check started as the turn was accepted (sendMessage), while it was recorded.
  const readyAhead = slot.takeReadyAhead(READY_AHEAD_FRESH_MS);
  const index = slot.book.record.runs.findIndex((run) => run.id === turn.runId);
  if (slot.runner && slot.runner.record.runs.length !== index) await slot.closeRunner('resync');
  if (slot.runner && !slot.runner.canApplySettings(turn.settings)) await slot.closeRunner('settings_changed');
  if (
    slot.runner &&
    !startedForTurn &&
    (wasWarm || slot.runner.keepsWarm) &&
    !(await (readyAhead ?? slot.runner.ready(READY_TIMEOUT_MS)))
  ) {
    await slot.closeRunner('agent_gone');
  }
  if (slot.runner) return slot.runner;
  await slot.closed();
  // The agent started for this turn gets the submitting client's TERM/COLORTERM/NO_COLOR (a
  // runner kept open for the session's next queued turn keeps the ones it started with).
  const runner = await openSessionRunner(x.deps, x.store, slot.book.record, turn.presentation, async (cliVersion) => {
    // A session created by the orchestrator learns its CLI version when its first runner opens.
    if (slot.book.record.cliVersion === undefined) await slot.book.update((record) => ({ ...record, cliVersion }));
    slot.runnerBase = index;
  });
  slot.attach(runner);
  return runner;
}

/**
 * A runner for the session `record` (read back through `store`), with the adapter's runtime
 * from the host and the orchestrator's limits; `beforeOpen` gets the prepared CLI's version
 * before the runner reads its record. Used for a turn's runner and for a prewarmed agent's.
 */
export async function openSessionRunner(
  deps: OrchestratorDeps,
  store: Store,
  record: SessionRecord,
  presentation: PresentationEnv | undefined,
  beforeOpen: (cliVersion: string) => Promise<void>,
): Promise<SessionRunner> {
  const runtime = await deps.runtimeFor(record.adapter, record);
  await beforeOpen(runtime.cli.version);
  const parentEnv = presentation ? withPresentation(runtime.parentEnv ?? process.env, presentation) : runtime.parentEnv;
  return SessionRunner.resume(
    {
      ...runtime,
      ...(parentEnv ? { parentEnv } : {}),
      store,
      runTimeoutMs: deps.limits.runTimeoutMs,
      interruptGraceMs: deps.limits.cancelGraceMs,
    },
    record.id,
  );
}

function endRun<R extends { runs: Array<{ id: string; status: string }> }>(
  record: R,
  runId: string,
  status: 'cancelled' | 'failed',
  reason: string,
): R {
  const endedAt = new Date().toISOString();
  return {
    ...record,
    runs: record.runs.map((run) =>
      run.id === runId && (run.status === 'queued' || run.status === 'running') ? { ...run, status, reason, endedAt } : run,
    ),
  };
}
