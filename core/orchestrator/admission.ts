import path from 'node:path';
import { z } from 'zod';
import type { Autonomy } from '../adapter.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { treesOverlap } from '../workspace/index.js';

/**
 * Admission: which queued turns may start now. A pure, synchronous state machine with no I/O,
 * no clock and no timers; the orchestrator service around it submits the turns that `next()`
 * returns and calls `release()` once a turn's child is cleaned up.
 *
 * The rule: scan the queue in FIFO order; a request starts iff a run slot is free, its session
 * has no live turn, its tree conflicts with no live lock, and it conflicts with no EARLIER
 * request still in the queue. Two requests conflict when they share a session, or when their
 * trees overlap (same directory, ancestor or descendant) and at least one of them writes.
 * Hence conflicting requests start in FIFO order, a writer waiting behind readers is never
 * starved by later readers, and a later request that conflicts with nothing ahead may pass.
 */

/** The limits of `orchestrator:` in one-works.yaml that admission enforces. */
export const AdmissionLimitsSchema = z.strictObject({
  /** Live turns across all sessions (1..64). */
  maxConcurrentRuns: z.number().int().min(1).max(64),
  /** Queued turns across all sessions. */
  maxQueuedTotal: z.number().int().min(1),
  /** Queued turns of one session. */
  maxQueuedPerSession: z.number().int().min(1),
});
export type AdmissionLimits = z.infer<typeof AdmissionLimitsSchema>;

/** One turn asking to run. */
export const TurnRequestSchema = z.strictObject({
  turnId: z.string().min(1),
  sessionId: z.string().min(1),
  /** The session's canonical workspace (see `canonicalWorkspace`): locks compare these strings. */
  workspace: z.string().refine((p) => path.isAbsolute(p), { message: 'must be an absolute canonical path' }),
  /** True for a writer (autonomy other than `off`): it needs its whole tree to itself. */
  writer: z.boolean(),
});
export type TurnRequest = z.infer<typeof TurnRequestSchema>;

/** Where a known turn stands. */
export type AdmissionState = 'queued' | 'live';

/** A status display's view of admission, in queue order and start order. */
export interface AdmissionSnapshot {
  limits: AdmissionLimits;
  live: TurnRequest[];
  queued: TurnRequest[];
  /** Every session with a live or queued turn. */
  sessions: Array<{ sessionId: string; liveTurnId: string | undefined; queued: number }>;
}

/** The admission state machine; see `createAdmission`. */
export interface Admission {
  /**
   * Appends a turn to the queue; it starts on a later `next()`. The bounds count queued turns,
   * but a request that `next()` would start at once is accepted even at a bound, since it does
   * not wait. Throws OneWorksError `queue_full` naming the bound (nothing is accepted), or
   * `internal` for a malformed request or a turn id already queued or live.
   */
  enqueue(request: TurnRequest): { accepted: true; position: number };
  /** Moves the turns that may start now from the queue to live and returns them, in queue order. */
  next(): Array<Readonly<TurnRequest>>;
  /** The live turn's child is cleaned up: frees its slot and its lock. False when it was not live. */
  release(turnId: string): boolean;
  /** Removes a queued turn and returns it; undefined when it is not queued (live or unknown). */
  cancelQueued(turnId: string): Readonly<TurnRequest> | undefined;
  /**
   * Removes and returns, in queue order, the session's queued turns enqueued before
   * `exceptTurnId` (all of them without it), for `send --interrupt`. Throws `internal` when
   * `exceptTurnId` is not a queued or live turn of that session.
   */
  supersede(sessionId: string, exceptTurnId?: string): Array<Readonly<TurnRequest>>;
  /** Removes and returns the session's queued turns; its live turn, if any, stays live. */
  dropSession(sessionId: string): Array<Readonly<TurnRequest>>;
  /**
   * Takes a writer lock on each of `trees` outside the queue, for work the orchestrator does
   * itself in them (a merge into the user's checkout). Granted only when no live lock (a turn's
   * or another hold's) overlaps any of them; queued turns that overlap wait until `release()`,
   * after which the caller pumps. Refused with `heldBy`: who holds an overlapping lock
   * (`session <id>` or another holder's label).
   */
  hold(holder: string, trees: readonly string[]): { release: () => void } | { heldBy: string };
  stateOf(turnId: string): AdmissionState | undefined;
  /** Whether `request`, enqueued now, would start on the next `next()` (nothing changes). */
  wouldStartNow(request: TurnRequest): boolean;
  snapshot(): AdmissionSnapshot;
}

/** Autonomy `off` only reads; every other level may write. */
export function isWriter(autonomy: Autonomy): boolean {
  return autonomy !== 'off';
}

/**
 * Creates an empty admission state machine. Throws OneWorksError `internal` for limits outside
 * their ranges (the config schema validates them first, so that is a bug).
 */
export function createAdmission(limits: AdmissionLimits): Admission {
  const parsed = AdmissionLimitsSchema.safeParse(limits);
  if (!parsed.success) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, `invalid admission limits: ${z.prettifyError(parsed.error)}`, { data: { limits } });
  }
  return new AdmissionQueue(parsed.data);
}

interface Entry {
  request: Readonly<TurnRequest>;
  /** Enqueue order, for `supersede`. */
  seq: number;
}

interface LockCount {
  readers: number;
  writers: number;
}

class AdmissionQueue implements Admission {
  readonly #limits: AdmissionLimits;
  #seq = 0;
  // A Map iterates in insertion order: it is the FIFO queue, with O(1) removal anywhere.
  readonly #queued = new Map<string, Entry>();
  readonly #live = new Map<string, Entry>();
  readonly #queuedPerSession = new Map<string, number>();
  readonly #liveBySession = new Map<string, string>();
  readonly #locks = new Map<string, LockCount>();
  // Holds taken with hold(): their trees and who holds them (also counted as writers in #locks).
  readonly #holds = new Set<{ holder: string; trees: readonly string[] }>();
  readonly #overlap = new OverlapMemo();

  constructor(limits: AdmissionLimits) {
    this.#limits = limits;
  }

  enqueue(request: TurnRequest): { accepted: true; position: number } {
    const parsed = TurnRequestSchema.safeParse(request);
    if (!parsed.success) {
      throw new OneWorksError(ERROR_CODES.INTERNAL, `invalid turn request: ${z.prettifyError(parsed.error)}`, { data: { request } });
    }
    // Frozen: the same object is handed back by next() and friends, and release() relies on it.
    const req = Object.freeze(parsed.data);
    if (this.#queued.has(req.turnId) || this.#live.has(req.turnId)) {
      throw new OneWorksError(ERROR_CODES.INTERNAL, `turn ${req.turnId} is already ${this.stateOf(req.turnId)}`, {
        data: { turnId: req.turnId },
      });
    }
    const entry: Entry = { request: req, seq: ++this.#seq };
    const bound = this.#fullBound(req.sessionId);
    if (bound && !this.#admissible(entry).includes(entry)) throw queueFull(req, bound, this.#limits);
    this.#queued.set(req.turnId, entry);
    this.#queuedPerSession.set(req.sessionId, (this.#queuedPerSession.get(req.sessionId) ?? 0) + 1);
    return { accepted: true, position: this.#queued.size };
  }

  next(): Array<Readonly<TurnRequest>> {
    const started = this.#admissible();
    for (const entry of started) {
      const { turnId, sessionId, workspace, writer } = entry.request;
      this.#unqueue(entry);
      this.#live.set(turnId, entry);
      this.#liveBySession.set(sessionId, turnId);
      this.#lock(workspace, writer, +1);
    }
    return started.map((entry) => entry.request);
  }

  release(turnId: string): boolean {
    const entry = this.#live.get(turnId);
    if (!entry) return false;
    const { sessionId, workspace, writer } = entry.request;
    this.#live.delete(turnId);
    this.#liveBySession.delete(sessionId);
    this.#lock(workspace, writer, -1);
    return true;
  }

  // Counts a reader or writer on `tree` in or out of the live locks.
  #lock(tree: string, writer: boolean, delta: 1 | -1): void {
    const lock = this.#locks.get(tree) ?? { readers: 0, writers: 0 };
    if (writer) lock.writers += delta;
    else lock.readers += delta;
    if (lock.readers + lock.writers === 0) this.#locks.delete(tree);
    else this.#locks.set(tree, lock);
  }

  cancelQueued(turnId: string): Readonly<TurnRequest> | undefined {
    const entry = this.#queued.get(turnId);
    if (!entry) return undefined;
    this.#unqueue(entry);
    return entry.request;
  }

  supersede(sessionId: string, exceptTurnId?: string): Array<Readonly<TurnRequest>> {
    let before = Infinity;
    if (exceptTurnId !== undefined) {
      const newer = this.#queued.get(exceptTurnId) ?? this.#live.get(exceptTurnId);
      if (!newer || newer.request.sessionId !== sessionId) {
        throw new OneWorksError(ERROR_CODES.INTERNAL, `turn ${exceptTurnId} is not a queued or live turn of session ${sessionId}`, {
          data: { sessionId, turnId: exceptTurnId },
        });
      }
      before = newer.seq;
    }
    return this.#removeQueued((entry) => entry.request.sessionId === sessionId && entry.seq < before);
  }

  dropSession(sessionId: string): Array<Readonly<TurnRequest>> {
    return this.#removeQueued((entry) => entry.request.sessionId === sessionId);
  }

  hold(holder: string, trees: readonly string[]): { release: () => void } | { heldBy: string } {
    for (const tree of trees) {
      for (const entry of this.#live.values()) {
        if (this.#overlap.test(tree, entry.request.workspace)) return { heldBy: `session ${entry.request.sessionId}` };
      }
      for (const other of this.#holds) {
        if (other.trees.some((held) => this.#overlap.test(tree, held))) return { heldBy: other.holder };
      }
    }
    const hold = { holder, trees: [...trees] };
    this.#holds.add(hold);
    for (const tree of hold.trees) this.#lock(tree, true, +1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.#holds.delete(hold);
        for (const tree of hold.trees) this.#lock(tree, true, -1);
      },
    };
  }

  stateOf(turnId: string): AdmissionState | undefined {
    if (this.#live.has(turnId)) return 'live';
    return this.#queued.has(turnId) ? 'queued' : undefined;
  }

  wouldStartNow(request: TurnRequest): boolean {
    const entry: Entry = { request, seq: this.#seq + 1 };
    return this.#admissible(entry).includes(entry);
  }

  snapshot(): AdmissionSnapshot {
    const ids = new Set([...this.#liveBySession.keys(), ...this.#queuedPerSession.keys()]);
    return {
      limits: { ...this.#limits },
      live: [...this.#live.values()].map((entry) => ({ ...entry.request })),
      queued: [...this.#queued.values()].map((entry) => ({ ...entry.request })),
      sessions: [...ids].map((sessionId) => ({
        sessionId,
        liveTurnId: this.#liveBySession.get(sessionId),
        queued: this.#queuedPerSession.get(sessionId) ?? 0,
      })),
    };
  }

  // The FIFO scan. `extra`, when given, is scanned as if appended to the queue (enqueue's
  // "would it start at once?" question). Every scanned entry, started or not, blocks later
  // conflicting ones: a started one becomes a live lock, a waiting one keeps its place.
  #admissible(extra?: Entry): Entry[] {
    const started: Entry[] = [];
    let free = this.#limits.maxConcurrentRuns - this.#live.size;
    if (free === 0 || (this.#queued.size === 0 && !extra)) return started;
    const aheadSessions = new Set<string>();
    // Distinct trees ahead in the scan → whether any of them is a writer.
    const aheadTrees = new Map<string, boolean>();
    const queue = extra ? [...this.#queued.values(), extra] : this.#queued.values();
    for (const entry of queue) {
      if (free === 0) break;
      const { sessionId, workspace, writer } = entry.request;
      const blocked =
        this.#liveBySession.has(sessionId) ||
        aheadSessions.has(sessionId) ||
        this.#conflictsLive(workspace, writer) ||
        this.#conflictsAhead(workspace, writer, aheadTrees);
      if (!blocked) {
        started.push(entry);
        free--;
      }
      aheadSessions.add(sessionId);
      aheadTrees.set(workspace, writer || aheadTrees.get(workspace) === true);
    }
    return started;
  }

  // Readers share overlapping trees; a writer conflicts with any overlapping tree.
  #conflictsLive(workspace: string, writer: boolean): boolean {
    for (const [tree, lock] of this.#locks) {
      if ((writer || lock.writers > 0) && this.#overlap.test(workspace, tree)) return true;
    }
    return false;
  }

  #conflictsAhead(workspace: string, writer: boolean, aheadTrees: Map<string, boolean>): boolean {
    for (const [tree, treeHasWriter] of aheadTrees) {
      if ((writer || treeHasWriter) && this.#overlap.test(workspace, tree)) return true;
    }
    return false;
  }

  #fullBound(sessionId: string): 'maxQueuedTotal' | 'maxQueuedPerSession' | undefined {
    if (this.#queued.size >= this.#limits.maxQueuedTotal) return 'maxQueuedTotal';
    const depth = this.#queuedPerSession.get(sessionId) ?? 0;
    return depth >= this.#limits.maxQueuedPerSession ? 'maxQueuedPerSession' : undefined;
  }

  #removeQueued(match: (entry: Entry) => boolean): Array<Readonly<TurnRequest>> {
    const removed = [...this.#queued.values()].filter(match);
    for (const entry of removed) this.#unqueue(entry);
    return removed.map((entry) => entry.request);
  }

  #unqueue(entry: Entry): void {
    const { turnId, sessionId } = entry.request;
    this.#queued.delete(turnId);
    const depth = (this.#queuedPerSession.get(sessionId) ?? 1) - 1;
    if (depth === 0) this.#queuedPerSession.delete(sessionId);
    else this.#queuedPerSession.set(sessionId, depth);
  }
}

const MEMO_TREES = 256;

// treesOverlap resolves both paths on every call, while the same few trees meet on every scan:
// remember answers per pair, dropping everything once more than MEMO_TREES trees were seen.
class OverlapMemo {
  readonly #rows = new Map<string, Map<string, boolean>>();

  test(a: string, b: string): boolean {
    if (a === b) return true;
    let row = this.#rows.get(a);
    if (!row) {
      if (this.#rows.size >= MEMO_TREES) this.#rows.clear();
      row = new Map();
      this.#rows.set(a, row);
    }
    let overlap = row.get(b);
    if (overlap === undefined) {
      overlap = treesOverlap(a, b);
      if (row.size < MEMO_TREES) row.set(b, overlap);
    }
    return overlap;
  }
}

function queueFull(req: TurnRequest, bound: 'maxQueuedTotal' | 'maxQueuedPerSession', limits: AdmissionLimits): OneWorksError {
  const limit = limits[bound];
  const turns = limit === 1 ? '1 turn' : `${limit} turns`;
  const what =
    bound === 'maxQueuedTotal' ? `${turns} already waiting across all sessions` : `session ${req.sessionId} already has ${turns} waiting`;
  return new OneWorksError(
    ERROR_CODES.QUEUE_FULL,
    `queue full: ${what} (orchestrator.${bound}); turn ${req.turnId} was not accepted. Retry once some finish, or raise orchestrator.${bound}`,
    { data: { bound, limit, sessionId: req.sessionId, turnId: req.turnId } },
  );
}
