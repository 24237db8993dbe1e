import { z } from 'zod';
import type { Autonomy } from '../adapter.js';
import { isOneWorksError } from '../errors.js';
import type { SessionRecord, Store } from '../store/index.js';
import { runView } from './session-detail.js';
import { EffectiveSettingsSchema, TurnHandleSchema, type TurnHandle } from './turn-handle-schema.js';

/**
 * A turn handle as request keys keep it. Handles saved before handles carried settings have
 * none: {@link completeHandle} fills them from the run.
 */
export const StoredHandleSchema = TurnHandleSchema.extend({ settings: EffectiveSettingsSchema.optional() });
export type StoredHandle = z.infer<typeof StoredHandleSchema>;

/**
 * The handle with settings: its own, else those its run recorded (`record` is its session's),
 * else the session's pending autonomy, else `defaultAutonomy()` (the adapter's default).
 */
export function completeHandle(handle: StoredHandle, record: SessionRecord, defaultAutonomy: () => Autonomy): TurnHandle {
  if (handle.settings) return { ...handle, settings: handle.settings };
  const run = record.runs.find((r) => r.id === handle.runId);
  return { ...handle, settings: run ? runView(run).settings : { autonomy: record.pending?.autonomy ?? defaultAutonomy() } };
}

/** What a request key reserves before its turn is recorded: the turn's pre-assigned ids. */
export const PendingTurnSchema = z.strictObject({ sessionId: z.string().min(1), runId: z.string().min(1) });
export type PendingTurn = z.infer<typeof PendingTurnSchema>;

/**
 * The handle of a reserved turn after a crash: when its run is in the store, the handle it got
 * (settings from the record; `running` when it started); undefined when it never was recorded.
 */
export async function settledHandle(store: Store, pending: PendingTurn): Promise<StoredHandle | undefined> {
  let record: SessionRecord;
  try {
    record = await store.readSession(pending.sessionId);
  } catch (error) {
    if (isOneWorksError(error, 'session_not_found')) return undefined;
    throw error;
  }
  const run = record.runs.find((r) => r.id === pending.runId);
  if (!run) return undefined;
  return { ...pending, state: run.startedAt === undefined ? 'queued' : 'running', settings: runView(run).settings };
}
