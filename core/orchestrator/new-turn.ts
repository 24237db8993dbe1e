import type { SessionRecord } from '../store/index.js';
import type { AdapterDefaults } from './orchestrator-deps.js';
import type { TurnSettingsResolved } from './session-slot.js';
import type { CreateSessionRequest, SendMessageRequest } from './types.js';

/** The settings of a new session's first turn: the request's, else the adapter's defaults. */
export function createSettings(request: CreateSessionRequest, defaults: AdapterDefaults): TurnSettingsResolved {
  return {
    model: request.model ?? defaults.model,
    effort: request.effort ?? defaults.effort,
    autonomy: request.autonomy ?? defaults.autonomy,
  };
}

/** The settings of a later turn: the request's, else those of the session's latest run. */
export function sendSettings(record: SessionRecord, request: SendMessageRequest, defaults: () => AdapterDefaults): TurnSettingsResolved {
  const last = record.runs.at(-1) ?? record.pending;
  return {
    model: request.model ?? last?.model,
    effort: request.effort ?? last?.effort,
    autonomy: request.autonomy ?? last?.autonomy ?? defaults().autonomy,
  };
}

/** The record of a session that has no run yet; its first turn is recorded as queued next. */
export function newSessionRecord(id: string, workspace: string, request: CreateSessionRequest, settings: TurnSettingsResolved): SessionRecord {
  const now = new Date().toISOString();
  return {
    id,
    adapter: request.adapter,
    workspace,
    createdAt: now,
    updatedAt: now,
    ...(request.title ? { title: request.title } : {}),
    status: 'idle',
    runs: [],
    pending: settings,
    ...(request.policy ? { policy: request.policy } : {}),
  };
}
