import type { CatalogModel } from '../catalog/index.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../errors.js';
import type { RuntimeEvent } from '../events/index.js';
import type { SessionRecord } from '../store/index.js';
import { needsCatalog } from './launch-settings.js';
import { loadSlot, slotSummary, type OrchestratorContext } from './orchestrator-context.js';
import type { OrchestratorDeps } from './orchestrator-deps.js';
import { pendingQuestions } from './pending-questions.js';
import {
  boundedRunView,
  cutText,
  mapStrings,
  MAX_EVENT_STRING_CHARS,
  MAX_RUN_TEXT_CHARS,
  readBounds,
  recentEvents,
  usageReport,
} from './session-detail.js';
import { summarize } from './session-summary.js';
import type { EffectiveSettings, OrchestratorInfo, ReadSessionRequest, SessionDetail, SessionSummary, UsageReport } from './types.js';

/**
 * The read side of the orchestrator (list, readSession, usage, info, models) and its catalog
 * lookups, as functions of what the orchestrator holds, so that orchestrator.ts keeps only the
 * state.
 */

/** `list`: every stored session (a loaded one as its slot has it), then loaded ones not stored yet. */
export async function listSummaries(ctx: OrchestratorContext): Promise<SessionSummary[]> {
  const records = await ctx.deps.store.listSessions();
  const seen = new Set<string>();
  const out = records.map((record) => {
    seen.add(record.id);
    const slot = ctx.slots.get(record.id);
    return slot ? slotSummary(ctx, slot) : summarize(record, { live: false, queued: 0 });
  });
  for (const slot of ctx.slots.values()) if (!seen.has(slot.id)) out.push(slotSummary(ctx, slot));
  return out;
}

/** `readSession`: the session's {@link sessionDetail} within the request's bounds (readBounds). */
export async function readSessionDetail(ctx: OrchestratorContext, request: ReadSessionRequest): Promise<SessionDetail> {
  const bounds = readBounds(request);
  const slot = await loadSlot(ctx, request.sessionId);
  // Persisted events only: the log may lag the live stream by the events in flight.
  const log = await ctx.deps.store.readEvents(request.sessionId);
  return sessionDetail(slot.book.record, slotSummary(ctx, slot), log, bounds);
}

/** `usage`: the report over the named sessions, else over every stored and loaded one. */
export async function sessionUsage(ctx: OrchestratorContext, sessionIds?: string[]): Promise<UsageReport> {
  if (sessionIds) return usageReport(await Promise.all(sessionIds.map(async (id) => (await loadSlot(ctx, id)).book.record)));
  const stored = await ctx.deps.store.listSessions();
  const records = stored.map((record) => ctx.slots.get(record.id)?.book.record ?? record);
  for (const slot of ctx.slots.values()) if (!stored.some((r) => r.id === slot.id)) records.push(slot.book.record);
  return usageReport(records);
}

/** What a native session id (the agent's own, or one of its child sessions') reads as in a read. */
export const NATIVE_ID_MASK = '[native-id]';

// Fields of agent-supplied payloads that hold a native session id.
const NATIVE_KEY = /^(native_?session_?id|child_?session_?id|session_?id)$/i;

/**
 * What readSession returns for a session's record, summary and persisted event log, within
 * `bounds.maxBytes` of JSON as a whole (for any bound of at least a few KiB): the latest run's
 * prompt and text are cut to {@link MAX_RUN_TEXT_CHARS} (less when they would take more than
 * half the bytes) and the events get the bytes left (see recentEvents). Native session ids never
 * appear: the record's own, every child session's and every session id in native payloads of the
 * whole log ({@link nativeSessionIds}) are replaced by {@link NATIVE_ID_MASK} everywhere in the
 * detail, before anything is cut (so a cut never leaves part of one).
 */
export function sessionDetail(
  record: SessionRecord,
  summary: SessionSummary,
  log: readonly RuntimeEvent[],
  bounds: { maxEvents: number; maxBytes: number },
): SessionDetail {
  const mask = masker(nativeSessionIds(record, log));
  const latest = record.runs.at(-1);
  const questions = pendingQuestions(log, record.attention);
  const head = (cap: number) => ({
    summary: mask(summary),
    ...(latest ? { latestRun: boundedRunView(mask(latest), cap) } : {}),
    pendingQuestions: questions.map((q) => cutText(mask(q), Math.min(cap, MAX_EVENT_STRING_CHARS))),
  });
  let cap = MAX_RUN_TEXT_CHARS;
  let fixed = head(cap);
  while (jsonBytes({ ...fixed, events: [], eventsTruncated: false }) > bounds.maxBytes / 2 && cap > 128) {
    cap = Math.floor(cap / 4);
    fixed = head(cap);
  }
  // Commas between the events count too.
  const room = bounds.maxBytes - jsonBytes({ ...fixed, events: [], eventsTruncated: false }) - (bounds.maxEvents - 1);
  const { events, truncated } = recentEvents(log, { maxEvents: bounds.maxEvents, maxBytes: Math.max(0, room) }, mask);
  return { ...fixed, events, eventsTruncated: truncated };
}

/**
 * Every native session id a session's record and log name: the record's nativeSessionId, each
 * child_session's childSessionId, and the string values of session-id fields (sessionId,
 * session_id, nativeSessionId, childSessionId…) at any depth of native payloads and settings
 * snapshots.
 */
export function nativeSessionIds(record: Pick<SessionRecord, 'nativeSessionId'>, log: readonly RuntimeEvent[]): Set<string> {
  const ids = new Set<string>();
  if (record.nativeSessionId) ids.add(record.nativeSessionId);
  for (const event of log) {
    if (event.type === 'child_session') ids.add(event.childSessionId);
    else if (event.type === 'native') collectIds(event.payload, ids);
    else if (event.type === 'settings.changed') collectIds(event.settings, ids);
  }
  return ids;
}

function collectIds(value: unknown, ids: Set<string>): void {
  if (Array.isArray(value)) for (const item of value) collectIds(item, ids);
  else if (typeof value === 'object' && value !== null) {
    for (const [name, item] of Object.entries(value)) {
      if (NATIVE_KEY.test(name) && typeof item === 'string') ids.add(item);
      else collectIds(item, ids);
    }
  }
}

// Replaces every id (longest first) in every string of a value. Ids shorter than the mask are
// left alone: masking never makes a string longer, so it cannot push a read over its bound.
function masker(ids: ReadonlySet<string>): <T>(value: T) => T {
  const needles = [...ids].filter((id) => id.length >= NATIVE_ID_MASK.length).sort((a, b) => b.length - a.length);
  if (needles.length === 0) return (value) => value;
  return (value) => mapStrings(value, (text) => needles.reduce((out, needle) => out.split(needle).join(NATIVE_ID_MASK), text));
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
    ...(deps.defaultAdapter === undefined ? {} : { defaultAdapter: deps.defaultAdapter }),
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
 * session as it is when the turn is accepted. A catalog the host could only serve degraded (the
 * CLI cannot start; see OrchestratorDeps.modelsFor) is used with its note given to `advise`.
 *
 * A catalog past its freshness may serve the check as it is (ModelsForOptions.stale, within the
 * host's bound): settings it allows are accepted without a new listing; a model or effort it
 * does not allow is checked again against a fresh listing, awaited here, which alone can refuse it.
 */
export async function withCatalog(
  deps: OrchestratorDeps,
  adapter: string,
  model: () => string | undefined,
  resolve: (models: CatalogModel[] | undefined) => EffectiveSettings,
  advise: (note: string) => void = () => undefined,
): Promise<EffectiveSettings> {
  if (!needsCatalog(model()) || !deps.modelsFor) return resolve(undefined);
  let degraded: string | undefined;
  let refresh: (() => Promise<CatalogModel[] | undefined>) | undefined;
  let models = await deps.modelsFor(adapter, {
    degraded: (note) => (degraded = note),
    stale: (listing) => (refresh = listing),
  });
  if (models === undefined || (await deps.catalogIsAdvisory?.(adapter)) !== true) {
    let settings: EffectiveSettings;
    try {
      settings = resolve(models);
    } catch (error) {
      // A stale catalog refuses nothing by itself: the fresh listing decides.
      if (!refresh || !isCatalogRefusal(error)) throw error;
      models = await refresh();
      settings = resolve(models);
    }
    // Notes are given after `resolve`, which may reset the caller's list.
    if (degraded !== undefined) advise(degraded);
    return settings;
  }
  // An advisory catalog never refuses a model, nor picks its effort: it only says when it does not know one.
  const settings = resolve(undefined);
  if (degraded !== undefined) advise(degraded);
  if (needsCatalog(settings.model) && !models.some((m) => m.id === settings.model)) {
    advise(
      `model ${settings.model} is not in ${adapter}'s model list, which is advisory (the configured model and the CLI's aliases): it is passed to ${adapter} as is`,
    );
  }
  return settings;
}

// The refusals a catalog decides: the model, or its effort, is not what it lists.
function isCatalogRefusal(error: unknown): boolean {
  return (
    isOneWorksError(error, ERROR_CODES.MODEL_UNAVAILABLE) ||
    isOneWorksError(error, ERROR_CODES.EFFORT_UNSUPPORTED) ||
    isOneWorksError(error, ERROR_CODES.EFFORT_REQUIRED)
  );
}
