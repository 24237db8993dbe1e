import { residentBytes } from '../process/resident-memory.js';
import type { OrchestratorLimits } from './orchestrator-deps.js';
import type { SessionSlot } from './session-slot.js';

/** Warm agents at most when the limits leave it out. */
export const DEFAULT_MAX_WARM_AGENTS = 4;

/** The `orchestrator:` limits of warm agents; see OrchestratorLimitsSchema. */
export interface WarmAgentLimits {
  /** How long an agent stays up after its turn, waiting for the session's next one, in ms; 0: closed at once. */
  keepWarmMs: number;
  /** Warm agents at most; beyond it the least recently used is closed. */
  maxWarmAgents: number;
  /** The warm agents' resident memory together at most, in bytes (undefined: no budget). */
  maxWarmMemoryBytes: number | undefined;
}

/** Why a warm agent was closed: the `reason` of its session's `session.closed` event. */
export type WarmCloseReason = 'idle' | 'evicted' | 'memory_budget' | 'config_changed' | 'shutdown';

/** Resident memory of a process (with its descendants) in bytes; undefined when unknown. */
export type MeasureRss = (pid: number) => Promise<number | undefined>;

/**
 * The agents kept warm between turns: after a completed turn, a session's runner (its agent
 * process, started and negotiated) stays attached to its slot for `keepWarmMs`, so that the
 * session's next turn skips spawn and load. At most `maxWarmAgents` stay warm and, with a
 * budget, within `maxWarmMemoryBytes` of resident memory together; the least recently used
 * is closed first. Every close goes through `SessionSlot.closeRunner(reason)`, which records
 * `session.closed` with the reason.
 *
 * Closing runs in the background (the turn that parked the agent does not wait for it); the
 * closes in flight are tracked, and `drain` waits for them.
 */
export class WarmAgents {
  readonly #limits: WarmAgentLimits;
  readonly #measureRss: MeasureRss | undefined;
  /** Parked slots by session id, least recently used first (Map insertion order). */
  readonly #parked = new Map<string, { slot: SessionSlot; timer: NodeJS.Timeout }>();
  readonly #closing = new Set<Promise<void>>();

  constructor(limits: WarmAgentLimits, measureRss?: MeasureRss) {
    this.#limits = limits;
    this.#measureRss = measureRss;
  }

  /** Sessions whose agent is warm now, least recently used first. */
  sessions(): string[] {
    return [...this.#parked.keys()];
  }

  /**
   * After a completed turn with nothing queued behind it: keeps the slot's runner warm when the
   * limits allow and its adapter can tell a live agent (`SessionRunner.keepsWarm`); otherwise
   * closes it (`idle`). Then closes the least recently used agents beyond the limits.
   */
  park(slot: SessionSlot): void {
    const runner = slot.runner;
    if (!runner) return;
    this.#unpark(slot.id);
    const { keepWarmMs, maxWarmAgents } = this.#limits;
    if (keepWarmMs <= 0 || maxWarmAgents <= 0 || !runner.keepsWarm) {
      this.#close(slot, 'idle');
      return;
    }
    const timer = setTimeout(() => this.close(slot.id, 'idle'), keepWarmMs);
    timer.unref();
    this.#parked.set(slot.id, { slot, timer });
    this.#track(this.#enforce());
  }

  /**
   * A turn of the session is about to run: its warm agent (if any) leaves the pool without
   * being closed. Returns true when it was warm.
   */
  take(sessionId: string): boolean {
    return this.#unpark(sessionId);
  }

  /** True while the session's agent waits warm in the pool. */
  isWarm(sessionId: string): boolean {
    return this.#parked.has(sessionId);
  }

  /** Closes the slot's runner (warm or not) with `reason` in the background; `drain` waits for it. */
  retire(slot: SessionSlot, reason: string): void {
    this.#unpark(slot.id);
    this.#close(slot, reason);
  }

  /** Closes the session's warm agent with `reason`, in the background; nothing when it is not warm. */
  close(sessionId: string, reason: WarmCloseReason): void {
    const entry = this.#parked.get(sessionId);
    if (!entry) return;
    this.#unpark(sessionId);
    this.#close(entry.slot, reason);
  }

  /** Closes every warm agent with `reason` and resolves once every close (also earlier ones) is done. */
  async drain(reason: WarmCloseReason): Promise<void> {
    for (const sessionId of [...this.#parked.keys()]) this.close(sessionId, reason);
    while (this.#closing.size > 0) await Promise.all([...this.#closing]);
  }

  #unpark(sessionId: string): boolean {
    const entry = this.#parked.get(sessionId);
    if (!entry) return false;
    clearTimeout(entry.timer);
    this.#parked.delete(sessionId);
    return true;
  }

  #close(slot: SessionSlot, reason: string): void {
    this.#track(slot.closeRunner(reason).catch(() => undefined));
  }

  #track(work: Promise<void>): void {
    const tracked = work.finally(() => this.#closing.delete(tracked));
    this.#closing.add(tracked);
  }

  // The least recently used first: beyond the count, then beyond the memory budget.
  async #enforce(): Promise<void> {
    while (this.#parked.size > this.#limits.maxWarmAgents) this.close(this.#parked.keys().next().value!, 'evicted');
    const budget = this.#limits.maxWarmMemoryBytes;
    if (budget === undefined || !this.#measureRss) return;
    let total = await this.#residentBytes();
    while (total > budget && this.#parked.size > 0) {
      const [sessionId, entry] = this.#parked.entries().next().value!;
      const pid = entry.slot.runner?.agentPid();
      total -= pid === undefined ? 0 : ((await this.#measureRss(pid)) ?? 0);
      this.close(sessionId, 'memory_budget');
    }
  }

  async #residentBytes(): Promise<number> {
    let total = 0;
    for (const { slot } of this.#parked.values()) {
      const pid = slot.runner?.agentPid();
      if (pid !== undefined) total += (await this.#measureRss!(pid)) ?? 0;
    }
    return total;
  }
}

/** The pool for an orchestrator's limits (keepWarmMs default 0: nothing stays warm), measuring memory from /proc unless told otherwise. */
export function createWarmAgents(limits: OrchestratorLimits, measureRss: MeasureRss = residentBytes): WarmAgents {
  return new WarmAgents(
    {
      keepWarmMs: limits.keepWarmMs ?? 0,
      maxWarmAgents: limits.maxWarmAgents ?? DEFAULT_MAX_WARM_AGENTS,
      maxWarmMemoryBytes: limits.maxWarmMemoryBytes,
    },
    measureRss,
  );
}
