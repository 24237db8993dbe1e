import type { SessionRecord } from '../store/index.js';
import type { AdapterDefaults } from './orchestrator-deps.js';
import type { CreateSessionRequest, EffectiveSettings } from './types.js';

/**
 * The settings of a session's last accepted turn: its latest run (queued ones included), else
 * the pending settings of its first turn. A record with neither (written before runs kept
 * their settings) falls back to the adapter's default autonomy.
 */
export function lastAcceptedSettings(record: SessionRecord, defaults: () => AdapterDefaults): EffectiveSettings {
  const last = record.runs.at(-1) ?? record.pending;
  return {
    ...(last?.model === undefined ? {} : { model: last.model }),
    ...(last?.effort === undefined ? {} : { effort: last.effort }),
    autonomy: last?.autonomy ?? defaults().autonomy,
  };
}

/** The record of a session that has no run yet; its first turn is recorded as queued next. */
export function newSessionRecord(id: string, workspace: string, request: CreateSessionRequest, settings: EffectiveSettings): SessionRecord {
  const now = new Date().toISOString();
  return {
    id,
    adapter: request.adapter,
    workspace,
    createdAt: now,
    updatedAt: now,
    ...(request.title ? { title: request.title } : {}),
    ...(request.labels?.length ? { labels: [...request.labels] } : {}),
    status: 'idle',
    runs: [],
    pending: settings,
    ...(request.policy ? { policy: request.policy } : {}),
    ...(request.forkOf
      ? { forkedFrom: { sessionId: request.forkOf.sessionId, ...(request.forkOf.runId ? { runId: request.forkOf.runId } : {}) } }
      : {}),
  };
}
