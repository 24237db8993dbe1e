import { join } from 'node:path';
import type { RuntimeEvent, TurnOutcome } from '../events/index.js';
import { sweepProcessesByEnvSync } from '../process/sweep.js';
import { ERROR_CODES, isOneWorksError } from '../errors.js';
import { sessionDir, type CorruptSession, type RunRecord, type SessionRecord, type SessionScan, type Store } from '../store/index.js';

/** What {@link recoverSessions} did: the sessions it changed, and the malformed records it skipped (left alone). */
export interface Recovery {
  changed: string[];
  corrupt: CorruptSession[];
}

/**
 * Crash recovery at start, after a stale owner of the state directory was replaced: runs the
 * dead owner left `running` have an unknown outcome (their session refuses to continue until a
 * person reconciles it), and runs it left `queued` were never submitted (`cancelled`,
 * `queue_lost`, never replayed). A known outcome is never downgraded: a `running` run whose
 * `turn.completed` reached the event log (its record write was lost, e.g. on a full disk) gets
 * that outcome back instead. With `stateDir`, whatever the dead owner's agents left running
 * (processes carrying the session HOME: a SIGKILLed owner cannot take its children's process
 * groups with it) is killed first. Sessions whose record is malformed are skipped (they are
 * returned with what is wrong with each: every record is read once, in one scan, so that a
 * caller names them without scanning again). With `only` (a fleet worker: the sessions whose
 * HOME it holds), no other session is read or touched.
 */
export async function recoverSessions(store: Store, options: RecoveryOptions = {}): Promise<Recovery> {
  const now = options.now ?? new Date();
  const changed: string[] = [];
  const { records, corrupt } = options.only ? await readSome(store, options.only) : await store.scanSessions();
  for (const record of records) {
    if (!record.runs.some((r) => r.status === 'running' || r.status === 'queued')) continue;
    if (options.stateDir) sweepProcessesByEnvSync('HOME', join(sessionDir(options.stateDir, record.id), 'home'));
    const recovered = recoveredRecord(record, await loggedOutcomes(store, record), now);
    if (!recovered) continue;
    await store.writeSession(recovered);
    changed.push(record.id);
  }
  return { changed, corrupt };
}

export interface RecoveryOptions {
  /** Whose processes (by session HOME) are swept before a record is recovered. */
  stateDir?: string;
  now?: Date;
  only?: readonly string[];
}

/** {@link recoverSessions}, for callers that need only the ids of the sessions it changed. */
export async function recoverInterruptedRuns(store: Store, options: RecoveryOptions = {}): Promise<string[]> {
  return (await recoverSessions(store, options)).changed;
}

/**
 * What recovery makes of a record whose owner died (undefined when it has no open run): `running`
 * runs take their logged outcome, else `unknown`/`owner_died`; `queued` ones become
 * `cancelled`/`queue_lost`; the session needs attention when a run is unknown or failed. Pure:
 * `sessions` shows records this way while no owner runs, without writing them.
 */
export function recoveredRecord(record: SessionRecord, logged: ReadonlyMap<string, TurnOutcome>, now: Date): SessionRecord | undefined {
  if (!record.runs.some((r) => r.status === 'running' || r.status === 'queued')) return undefined;
  const endedAt = now.toISOString();
  const runs = record.runs.map((run): RunRecord => {
    const outcome = logged.get(run.id);
    if (run.status === 'running' && outcome) return withOutcome(run, outcome, endedAt);
    if (run.status === 'running') return { ...run, status: 'unknown', reason: 'owner_died', endedAt };
    if (run.status === 'queued') return { ...run, status: 'cancelled', reason: 'queue_lost', endedAt };
    return run;
  });
  const wasOpen = (index: number): boolean => record.runs[index]?.status === 'running';
  const unknown = runs.filter((r, i) => wasOpen(i) && r.status === 'unknown' && r.reason === 'owner_died').map((r) => r.id);
  const failed = runs.filter((r, i) => wasOpen(i) && r.reason !== 'owner_died' && (r.status === 'failed' || r.status === 'unknown'));
  const notes = [
    ...(unknown.length > 0
      ? [`run ${unknown.join(', ')}: outcome unknown (One Works stopped during the turn); reconcile before continuing`]
      : []),
    ...failed.map((r) => `run ${r.id} ${r.status}: ${r.reason ?? r.status}`),
  ];
  return {
    ...record,
    runs,
    updatedAt: endedAt,
    status: notes.length > 0 ? 'needs_attention' : record.status === 'working' ? 'idle' : record.status,
    ...(notes.length > 0 ? { attention: [...(record.attention ?? []), ...notes] } : {}),
  };
}

/**
 * The outcomes the session's event log recorded (`turn.completed`) for its `running` runs. A log
 * that cannot be read gives none: the runs are then unknown, as without a log.
 */
export async function loggedOutcomes(store: Pick<Store, 'readEvents'>, record: SessionRecord): Promise<Map<string, TurnOutcome>> {
  const open = new Set(record.runs.filter((run) => run.status === 'running').map((run) => run.id));
  const outcomes = new Map<string, TurnOutcome>();
  if (open.size === 0) return outcomes;
  let events: RuntimeEvent[];
  try {
    events = await store.readEvents(record.id);
  } catch {
    return outcomes;
  }
  for (const event of events) if (event.type === 'turn.completed' && open.has(event.runId)) outcomes.set(event.runId, event.outcome);
  return outcomes;
}

function withOutcome(run: RunRecord, outcome: TurnOutcome, endedAt: string): RunRecord {
  return { ...run, status: outcome.status, reason: outcome.reason, text: outcome.text, usage: outcome.usage, endedAt };
}

// The records of these sessions that exist and can be read; a malformed one is skipped and
// reported, as in a scan, and one that cannot be read otherwise is skipped.
async function readSome(store: Store, ids: readonly string[]): Promise<SessionScan> {
  const records: SessionRecord[] = [];
  const corrupt: CorruptSession[] = [];
  for (const id of ids) {
    try {
      records.push(await store.readSession(id));
    } catch (error) {
      if (!isOneWorksError(error, ERROR_CODES.STATE_CORRUPT)) continue;
      const { file, reason } = error.data as { file: string; reason: string };
      corrupt.push({ sessionId: id, file, reason });
    }
  }
  return { records, corrupt };
}
