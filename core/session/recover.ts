import { join } from 'node:path';
import { sweepProcessesByEnvSync } from '../process/sweep.js';
import { sessionDir, type Store } from '../store/index.js';

/**
 * Crash recovery at start, after a stale owner of the state directory was replaced: runs the
 * dead owner left `running` have an unknown outcome (their session refuses to continue until a
 * person reconciles it), and runs it left `queued` were never submitted (`cancelled`,
 * `queue_lost`, never replayed). With `stateDir`, whatever the dead owner's agents left running
 * (processes carrying the session HOME: a SIGKILLed owner cannot take its children's process
 * groups with it) is killed first. Returns the ids of the sessions it changed.
 */
export async function recoverInterruptedRuns(store: Store, options: { stateDir?: string; now?: Date } = {}): Promise<string[]> {
  const now = options.now ?? new Date();
  const changed: string[] = [];
  for (const record of await store.listSessions()) {
    if (!record.runs.some((r) => r.status === 'running' || r.status === 'queued')) continue;
    if (options.stateDir) sweepProcessesByEnvSync('HOME', join(sessionDir(options.stateDir, record.id), 'home'));
    const endedAt = now.toISOString();
    const runs = record.runs.map((run) => {
      if (run.status === 'running') return { ...run, status: 'unknown' as const, reason: 'owner_died', endedAt };
      if (run.status === 'queued') return { ...run, status: 'cancelled' as const, reason: 'queue_lost', endedAt };
      return run;
    });
    const unknown = runs.filter((r) => r.status === 'unknown' && r.reason === 'owner_died').map((r) => r.id);
    await store.writeSession({
      ...record,
      runs,
      updatedAt: endedAt,
      status: unknown.length > 0 ? 'needs_attention' : record.status === 'working' ? 'idle' : record.status,
      ...(unknown.length > 0
        ? {
            attention: [
              ...(record.attention ?? []),
              `run ${unknown.join(', ')}: outcome unknown (One Works stopped during the turn); reconcile before continuing`,
            ],
          }
        : {}),
    });
    changed.push(record.id);
  }
  return changed;
}
