import { z } from 'zod';
import type { Autonomy } from '../adapter.js';
import { AutonomySchema, type SessionRecord } from '../store/index.js';
import { runView } from './session-detail.js';
import type { TurnHandle } from './types.js';

/**
 * A turn handle as request keys keep it. Handles saved before handles carried settings have
 * none: {@link completeHandle} fills them from the run.
 */
export const StoredHandleSchema = z.strictObject({
  sessionId: z.string().min(1),
  runId: z.string().min(1),
  state: z.enum(['queued', 'running']),
  settings: z.strictObject({ model: z.string().optional(), effort: z.string().optional(), autonomy: AutonomySchema }).optional(),
});
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
