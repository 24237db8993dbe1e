import { randomBytes } from '../lazy-crypto.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { EventDraft } from '../events/index.js';
import type { RunRecord, SessionRecord, Store } from '../store/index.js';

/** The outcomes a person may record for a run whose outcome is unknown. */
export const RECONCILED_STATUSES = ['completed', 'failed', 'interrupted'] as const;
export type ReconciledStatus = (typeof RECONCILED_STATUSES)[number];

/** What `sessions reconcile` asks for. */
export interface ReconcileRequest {
  sessionId: string;
  runId: string;
  status: ReconciledStatus;
  /** Why, in the person's words; kept in the `run.reconciled` event. */
  note?: string | undefined;
}

/** The reason a reconciled run carries. */
export const RECONCILED_REASON = 'reconciled';

/**
 * Settles an unknown run of `record` as `request.status` (reason `reconciled`) and returns the
 * new record and the `run.reconciled` event to log. The attention notes that named the run are
 * dropped; the session is idle again unless another note or unknown run remains. Throws `usage`
 * for a run that does not exist or whose outcome is known (only unknown outcomes are reconciled:
 * a recorded outcome is never rewritten).
 */
export function reconcileRecord(
  record: SessionRecord,
  request: ReconcileRequest,
  now: Date = new Date(),
): { record: SessionRecord; event: EventDraft } {
  const run = record.runs.find((r) => r.id === request.runId);
  if (!run) {
    const known = record.runs.map((r) => `${r.id} (${r.status})`).join(', ') || 'none';
    throw new OneWorksError(ERROR_CODES.USAGE, `session ${record.id} has no run ${request.runId}; its runs: ${known}`, {
      data: { sessionId: record.id, runId: request.runId },
    });
  }
  if (run.status !== 'unknown') {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `run ${run.id} of session ${record.id} is ${run.status}${run.reason && run.reason !== run.status ? ` (${run.reason})` : ''}, not unknown: only an unknown outcome is reconciled`,
      { data: { sessionId: record.id, runId: run.id, status: run.status } },
    );
  }
  const endedAt = now.toISOString();
  const runs = record.runs.map(
    (r): RunRecord => (r.id === run.id ? { ...r, status: request.status, reason: RECONCILED_REASON, endedAt } : r),
  );
  const mention = new RegExp(`\\bruns? (?:[\\w-]+, )*${escapeRegExp(run.id)}\\b`);
  const attention = (record.attention ?? []).filter((note) => !mention.test(note));
  const stillUnknown = runs.some((r) => r.status === 'unknown');
  const settled: SessionRecord = {
    ...record,
    runs,
    updatedAt: endedAt,
    status: attention.length > 0 || stillUnknown ? 'needs_attention' : record.status === 'needs_attention' ? 'idle' : record.status,
  };
  if (attention.length > 0) settled.attention = attention;
  else delete settled.attention;
  const note = request.note?.trim();
  const event: EventDraft = {
    type: 'run.reconciled',
    key: `run.reconciled:${run.id}:${randomBytes(6).toString('hex')}`,
    runId: run.id,
    status: request.status,
    previous: { status: run.status, ...(run.reason ? { reason: run.reason } : {}) },
    ...(note ? { note } : {}),
  };
  return { record: settled, event };
}

/**
 * Reconciles directly on the store, for when no orchestrator runs: the caller owns the state
 * directory (`store.acquireOwner`). Writes the record, then appends the event after the log's
 * last one. Returns the new record.
 */
export async function reconcileInStore(store: Store, request: ReconcileRequest, now: Date = new Date()): Promise<SessionRecord> {
  const { record, event } = reconcileRecord(await store.readSession(request.sessionId), request, now);
  await store.writeSession(record);
  const { lastSeq } = await store.eventIndex(record.id);
  await store.appendEvents(record.id, [{ ...event, sessionId: record.id, seq: lastSeq + 1, at: now.toISOString() }], { fsync: true });
  return record;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
