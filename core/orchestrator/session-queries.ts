import type { CatalogModel } from '../catalog/index.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { RuntimeEvent } from '../events/index.js';
import type { SessionRecord } from '../store/index.js';
import { needsCatalog } from './launch-settings.js';
import type { OrchestratorDeps } from './orchestrator-deps.js';
import { pendingQuestions } from './pending-questions.js';
import { boundedRunView, cutText, MAX_EVENT_STRING_CHARS, MAX_RUN_TEXT_CHARS, recentEvents } from './session-detail.js';
import type { EffectiveSettings, OrchestratorInfo, SessionDetail, SessionSummary } from './types.js';

/**
 * The read side of the orchestrator (readSession, info, models) and its catalog lookups, as
 * functions of what the orchestrator holds, so that orchestrator.ts keeps only the state.
 */

/**
 * What readSession returns for a session's record, summary and persisted event log, within
 * `bounds.maxBytes` of JSON as a whole (for any bound of at least a few KiB): the latest run's
 * prompt and text are cut to {@link MAX_RUN_TEXT_CHARS} (less when they would take more than
 * half the bytes) and the events get the bytes left (see recentEvents).
 */
export function sessionDetail(record: SessionRecord, summary: SessionSummary, log: readonly RuntimeEvent[], bounds: { maxEvents: number; maxBytes: number }): SessionDetail {
  const latest = record.runs.at(-1);
  const questions = pendingQuestions(log, record.attention);
  const head = (cap: number) => ({
    summary,
    ...(latest ? { latestRun: boundedRunView(latest, cap) } : {}),
    pendingQuestions: questions.map((q) => cutText(q, Math.min(cap, MAX_EVENT_STRING_CHARS))),
  });
  let cap = MAX_RUN_TEXT_CHARS;
  let fixed = head(cap);
  while (jsonBytes({ ...fixed, events: [], eventsTruncated: false }) > bounds.maxBytes / 2 && cap > 128) {
    cap = Math.floor(cap / 4);
    fixed = head(cap);
  }
  // Commas between the events count too.
  const room = bounds.maxBytes - jsonBytes({ ...fixed, events: [], eventsTruncated: false }) - (bounds.maxEvents - 1);
  const { events, truncated } = recentEvents(log, { maxEvents: bounds.maxEvents, maxBytes: Math.max(0, room) });
  return { ...fixed, events, eventsTruncated: truncated };
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value), 'utf8');
}

/** Roots, limits, activity and the defaults of every adapter the deps name. */
export function orchestratorInfo(deps: OrchestratorDeps, activity: { live: number; queued: number }): OrchestratorInfo {
  const { maxConcurrentRuns, maxQueuedTotal, maxQueuedPerSession, runTimeoutMs, cancelGraceMs } = deps.limits;
  return {
    approvedRoots: [...deps.approvedRoots],
    limits: { maxConcurrentRuns, maxQueuedTotal, maxQueuedPerSession, runTimeoutMs, cancelGraceMs },
    activity,
    adapters: (deps.adapterNames?.() ?? []).map((name) => {
      const { model, effort, autonomy } = deps.defaultsFor(name);
      return { name, ...(model === undefined ? {} : { model }), ...(effort === undefined ? {} : { effort }), autonomy };
    }),
  };
}

/** The adapter's catalog models; `usage` for an unknown adapter or one without a catalog. */
export async function catalogModels(deps: OrchestratorDeps, adapter: string): Promise<CatalogModel[]> {
  deps.defaultsFor(adapter);
  const models = deps.modelsFor ? await deps.modelsFor(adapter) : undefined;
  if (!models) throw new OneWorksError(ERROR_CODES.USAGE, `adapter ${adapter} cannot list its models`, { data: { adapter } });
  return models;
}

/**
 * Resolves turn settings, fetching the adapter's catalog first when the chosen model will be
 * checked. `resolve` runs right after the fetch with no await in between, so it sees the
 * session as it is when the turn is accepted.
 */
export async function withCatalog(
  deps: OrchestratorDeps,
  adapter: string,
  model: () => string | undefined,
  resolve: (models: CatalogModel[] | undefined) => EffectiveSettings,
): Promise<EffectiveSettings> {
  if (!needsCatalog(model()) || !deps.modelsFor) return resolve(undefined);
  return resolve(await deps.modelsFor(adapter));
}
