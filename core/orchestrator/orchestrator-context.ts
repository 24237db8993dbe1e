import { randomBytes } from 'node:crypto';
import type { RuntimeEvent } from '../events/index.js';
import type { Redactor } from '../redact.js';
import type { SessionRecord } from '../store/index.js';
import type { Admission } from './admission.js';
import type { OrchestratorDeps } from './orchestrator-deps.js';
import type { RequestKeyRegistry } from './request-keys.js';
import { SessionBook } from './session-book.js';
import { SessionSlot } from './session-slot.js';
import { summarize } from './session-summary.js';
import type { PendingTurn, StoredHandle } from './turn-handles.js';
import type { SessionSummary } from './types.js';

/**
 * The state the in-process orchestrator holds, as one object its helper modules (acceptance,
 * cancellation, session-queries) take explicitly, and the slot table over it: loading a
 * session's slot once, new books and session ids, subscriptions and a slot's summary.
 */

/** What the orchestrator holds; the maps are its own, shared by reference, never copied. */
export interface OrchestratorContext {
  readonly deps: OrchestratorDeps;
  readonly keys: RequestKeyRegistry<StoredHandle, PendingTurn>;
  readonly admission: Admission;
  /** Redacts the registered secrets from prompts before they are recorded. */
  readonly redactor: Redactor;
  /** Every session created or loaded, by id. */
  readonly slots: Map<string, SessionSlot>;
  /** Loads in flight, by session id, so that concurrent loads of one session share its slot. */
  readonly loading: Map<string, Promise<SessionSlot>>;
  /** True for an id a prewarmed agent holds: no new session takes it. */
  reserved(id: string): boolean;
  /** Wakes every waiter on orchestrator state (wait, waitForRun). */
  changed(): void;
  /** Starts every turn admission lets start now. */
  pump(): void;
}

/** The session's slot: the known one, else loaded from the store once (concurrent calls share the load). */
export async function loadSlot(ctx: OrchestratorContext, sessionId: string): Promise<SessionSlot> {
  const known = ctx.slots.get(sessionId);
  if (known) return known;
  let loading = ctx.loading.get(sessionId);
  if (!loading) {
    loading = (async () => {
      const record = await ctx.deps.store.readSession(sessionId);
      const { lastSeq } = await ctx.deps.store.eventIndex(sessionId);
      const slot = ctx.slots.get(sessionId) ?? new SessionSlot(newBook(ctx, record, lastSeq));
      ctx.slots.set(sessionId, slot);
      return slot;
    })().finally(() => ctx.loading.delete(sessionId));
    ctx.loading.set(sessionId, loading);
  }
  return loading;
}

/** A book for `record` whose events continue after `lastSeq`; every change wakes the waiters. */
export function newBook(ctx: OrchestratorContext, record: SessionRecord, lastSeq: number): SessionBook {
  return new SessionBook({ store: ctx.deps.store, record, lastSeq, redactor: ctx.redactor, onChange: () => ctx.changed() });
}

/** A fresh session id (`s-` and 10 hex digits) that no slot, no stored session and no prewarmed agent has. */
export async function newSessionId(ctx: OrchestratorContext): Promise<string> {
  for (;;) {
    const id = `s-${randomBytes(5).toString('hex')}`;
    if (!ctx.slots.has(id) && !ctx.reserved(id) && !(await ctx.deps.store.hasSession(id))) return id;
  }
}

/** The slot's summary: live when one of its turns is live in admission, the rest queued. */
export function slotSummary(ctx: OrchestratorContext, slot: SessionSlot): SessionSummary {
  const live = [...slot.turns.values()].some((turn) => ctx.admission.stateOf(turn.turnId) === 'live');
  return summarize(slot.book.record, { live, queued: slot.turns.size - (live ? 1 : 0) });
}

/**
 * `subscribe`: the listener gets the session's events from now on; when the session is not
 * loaded yet, once its load completes (nothing when the load fails). The returned function
 * unsubscribes, also before the load completes.
 */
export function subscribeSlot(ctx: OrchestratorContext, sessionId: string, listener: (event: RuntimeEvent) => void): () => void {
  const loaded = ctx.slots.get(sessionId);
  if (loaded) return loaded.book.subscribe(listener);
  let unsubscribe: (() => void) | undefined;
  let cancelled = false;
  loadSlot(ctx, sessionId).then(
    (slot) => {
      if (!cancelled) unsubscribe = slot.book.subscribe(listener);
    },
    () => undefined,
  );
  return () => {
    cancelled = true;
    unsubscribe?.();
  };
}
