import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { TurnOutcome } from '../events/index.js';
import type { RunRecord, RunStatus, SessionRecord } from '../store/index.js';
// The module itself, not core/worktree/index.js (git, execa): a summary runs no git.
import { worktreeFacts } from '../worktree/worktree-state.js';
import type { SessionSummary } from './types.js';

/** Run statuses after which a run never changes again. */
export function isTerminal(status: RunStatus): boolean {
  return status !== 'queued' && status !== 'running';
}

/** What the orchestrator knows beyond the record: its live and queued turns. */
export interface SessionActivity {
  live: boolean;
  queued: number;
}

/** The summary `status`, `list` and `wait` return. A session with a live or queued turn is `working`. */
export function summarize(record: SessionRecord, activity: SessionActivity): SessionSummary {
  const latest = record.runs.at(-1);
  const busy = activity.live || activity.queued > 0;
  return {
    sessionId: record.id,
    adapter: record.adapter,
    workspace: record.workspace,
    ...(record.title ? { title: record.title } : {}),
    ...(record.labels?.length ? { labels: [...record.labels] } : {}),
    ...(record.archived ? { archived: true } : {}),
    ...(record.imported ? { imported: true } : {}),
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    state: busy ? 'working' : record.status === 'working' ? 'idle' : record.status,
    queueDepth: activity.queued,
    ...(latest
      ? {
          latestRun: {
            runId: latest.id,
            status: latest.status,
            ...(latest.reason ? { reason: latest.reason } : {}),
            ...(latest.mode ? { mode: latest.mode } : {}),
          },
        }
      : {}),
    ...(record.attention?.length ? { attention: [...record.attention] } : {}),
    ...(record.worktree ? { worktree: { ...worktreeFacts(record.worktree), discarded: record.worktree.discardedAt !== undefined } } : {}),
  };
}

/**
 * Throws `session_unknown_outcome` when the session's latest submitted run has an unknown
 * outcome and nobody has reconciled it (the session still needs attention).
 */
export function assertKnownOutcome(record: SessionRecord): void {
  const submitted = record.runs.filter((run) => run.status !== 'cancelled' && run.status !== 'queued').at(-1);
  if (record.status === 'needs_attention' && submitted?.status === 'unknown') {
    throw new OneWorksError(
      ERROR_CODES.SESSION_UNKNOWN_OUTCOME,
      `session ${record.id}: the outcome of run ${submitted.id} is unknown (${submitted.reason ?? 'unknown'}); look at its events, then say what happened with \`one-works sessions reconcile ${record.id} ${submitted.id} --status completed|failed|interrupted\` before sending more`,
      { data: { sessionId: record.id, runId: submitted.id } },
    );
  }
}

/** A terminal run as an outcome; a cancelled run reads as `interrupted` with its reason. */
export function outcomeOfRun(run: RunRecord): TurnOutcome & { runStatus: RunStatus } {
  return {
    status: run.status === 'cancelled' || run.status === 'queued' || run.status === 'running' ? 'interrupted' : run.status,
    reason: run.reason ?? run.status,
    text: run.text ?? '',
    usage: run.usage ?? { reported: false },
    runStatus: run.status,
  };
}

/** Marks the given queued runs as cancelled with `reason` (others are left alone). */
export function cancelRuns(record: SessionRecord, runIds: ReadonlySet<string>, reason: string, now: string): SessionRecord {
  return {
    ...record,
    runs: record.runs.map((run) =>
      runIds.has(run.id) && run.status === 'queued' ? { ...run, status: 'cancelled' as const, reason, endedAt: now } : run,
    ),
  };
}
