import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import { createAdmission, type Admission, type AdmissionLimits, type TurnRequest } from '../../../core/orchestrator/index.js';

// Model-based check of admission: random interleavings of enqueue / next / release / cancel /
// supersede / dropSession, with the invariants checked after every step against a model that
// the test keeps itself (which turns are queued, in which order, and which are live).

// Parents, children and a sibling sharing a name prefix (`/w/ab` is not inside `/w/a`).
const TREES = ['/w', '/w/a', '/w/a/b', '/w/ab', '/w/c', '/x'];
const SESSIONS = ['s0', 's1', 's2', 's3', 's4'];

type Op =
  | { kind: 'enqueue'; session: number; tree: number; writer: boolean }
  | { kind: 'next' }
  | { kind: 'release'; pick: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'supersede'; session: number; keepNewest: boolean }
  | { kind: 'drop'; session: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('enqueue' as const),
      session: fc.nat(SESSIONS.length - 1),
      tree: fc.nat(TREES.length - 1),
      writer: fc.boolean(),
    }),
  },
  { weight: 4, arbitrary: fc.constant({ kind: 'next' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cancel' as const), pick: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('supersede' as const), session: fc.nat(SESSIONS.length - 1), keepNewest: fc.boolean() }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('drop' as const), session: fc.nat(SESSIONS.length - 1) }) },
);

const limits: fc.Arbitrary<AdmissionLimits> = fc.record({
  maxConcurrentRuns: fc.integer({ min: 1, max: 4 }),
  maxQueuedTotal: fc.integer({ min: 1, max: 8 }),
  maxQueuedPerSession: fc.integer({ min: 1, max: 4 }),
});

// Independent of core/workspace on purpose: these test paths need no resolution.
const overlap = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
const treeConflict = (a: TurnRequest, b: TurnRequest): boolean => (a.writer || b.writer) && overlap(a.workspace, b.workspace);
const conflict = (a: TurnRequest, b: TurnRequest): boolean => a.sessionId === b.sessionId || treeConflict(a, b);

class Model {
  queued: TurnRequest[] = [];
  live: TurnRequest[] = [];
  accepted = 0;
  started = 0;
  removed = 0;
  #count = 0;

  constructor(
    readonly limits: AdmissionLimits,
    readonly admission: Admission,
  ) {}

  apply(step: Op): void {
    const a = this.admission;
    switch (step.kind) {
      case 'enqueue': {
        const req = { turnId: `t${this.#count++}`, sessionId: SESSIONS[step.session]!, workspace: TREES[step.tree]!, writer: step.writer };
        this.#enqueue(req);
        return;
      }
      case 'next':
        this.#next();
        return;
      case 'release': {
        const victim = this.live[step.pick % Math.max(1, this.live.length)];
        expect(a.release(victim?.turnId ?? 'none')).toBe(victim !== undefined);
        this.live = this.live.filter((r) => r !== victim);
        return;
      }
      case 'cancel': {
        const victim = this.queued[step.pick % Math.max(1, this.queued.length)];
        expect(a.cancelQueued(victim?.turnId ?? 'none')).toEqual(victim);
        this.queued = this.queued.filter((r) => r !== victim);
        if (victim) this.removed++;
        return;
      }
      case 'supersede': {
        const session = SESSIONS[step.session]!;
        const mine = this.queued.filter((r) => r.sessionId === session);
        const newest = step.keepNewest ? mine.at(-1) : undefined;
        const removed = mine.filter((r) => r !== newest);
        expect(a.supersede(session, newest?.turnId)).toEqual(removed);
        this.queued = this.queued.filter((r) => !removed.includes(r));
        this.removed += removed.length;
        return;
      }
      case 'drop': {
        const session = SESSIONS[step.session]!;
        const removed = this.queued.filter((r) => r.sessionId === session);
        expect(a.dropSession(session)).toEqual(removed);
        this.queued = this.queued.filter((r) => r.sessionId !== session);
        this.removed += removed.length;
      }
    }
  }

  #enqueue(req: TurnRequest): void {
    const before = this.admission.snapshot();
    const depth = this.queued.filter((r) => r.sessionId === req.sessionId).length;
    const atBound = this.queued.length >= this.limits.maxQueuedTotal || depth >= this.limits.maxQueuedPerSession;
    // A turn that starts at once does not wait, so the bounds do not refuse it.
    const mayEnter = !atBound || this.#startsAtOnce(req);
    try {
      expect(this.admission.enqueue(req)).toEqual({ accepted: true, position: this.queued.length + 1 });
    } catch (error) {
      expect(isOneWorksError(error, 'queue_full')).toBe(true);
      expect(mayEnter, `refused ${req.turnId}, which may enter`).toBe(false);
      expect(this.admission.snapshot()).toEqual(before);
      return;
    }
    expect(mayEnter, `accepted ${req.turnId} beyond a bound`).toBe(true);
    this.queued.push(req);
    this.accepted++;
  }

  #next(): void {
    const started = this.admission.next();
    const startedIds = new Set(started.map((r) => r.turnId));
    const moved = this.queued.filter((r) => startedIds.has(r.turnId));
    const waiting = this.queued.filter((r) => !startedIds.has(r.turnId));
    // Only queued turns start, returned in queue order.
    expect(started).toEqual(moved);
    // FIFO among conflicting requests: nothing started past an earlier conflicting waiter.
    for (const b of moved) {
      const earlier = this.queued.slice(0, this.queued.indexOf(b));
      for (const a of earlier) if (waiting.includes(a)) expect(conflict(a, b), `${b.turnId} passed ${a.turnId}`).toBe(false);
    }
    this.live.push(...moved);
    this.queued = waiting;
    this.started += moved.length;
    // Work-conserving: every request left waiting has a reason to wait.
    for (const [i, b] of waiting.entries()) {
      const reason =
        this.live.length === this.limits.maxConcurrentRuns ||
        this.live.some((l) => conflict(l, b)) ||
        waiting.slice(0, i).some((a) => conflict(a, b));
      expect(reason, `${b.turnId} waits for nothing`).toBe(true);
    }
    // What was accepted beyond a bound has started: the bounds hold for turns that wait.
    expect(this.queued.length).toBeLessThanOrEqual(this.limits.maxQueuedTotal);
    for (const s of SESSIONS)
      expect(this.queued.filter((r) => r.sessionId === s).length).toBeLessThanOrEqual(this.limits.maxQueuedPerSession);
  }

  // The admission rule read literally: would `req`, appended to the queue, start on the next scan?
  #startsAtOnce(req: TurnRequest): boolean {
    let free = this.limits.maxConcurrentRuns - this.live.length;
    const queue = [...this.queued, req];
    for (const [i, b] of queue.entries()) {
      const blocked = this.live.some((l) => conflict(l, b)) || queue.slice(0, i).some((a) => conflict(a, b));
      if (free > 0 && !blocked) {
        if (b === req) return true;
        free--;
      }
    }
    return false;
  }

  checkInvariants(): void {
    const snap = this.admission.snapshot();
    expect(snap.live.map((r) => r.turnId).sort()).toEqual(this.live.map((r) => r.turnId).sort());
    expect(snap.queued).toEqual(this.queued);
    expect(this.live.length).toBeLessThanOrEqual(this.limits.maxConcurrentRuns);
    for (const [i, a] of this.live.entries()) {
      for (const b of this.live.slice(i + 1)) {
        expect(a.sessionId, 'two live turns of one session').not.toBe(b.sessionId);
        expect(treeConflict(a, b), `live ${a.turnId} and ${b.turnId} share a tree with a writer`).toBe(false);
      }
    }
    for (const s of snap.sessions) {
      expect(s.queued).toBe(this.queued.filter((r) => r.sessionId === s.sessionId).length);
      expect(s.liveTurnId).toBe(this.live.find((r) => r.sessionId === s.sessionId)?.turnId);
    }
  }

  // Releases everything until the queue is empty: no interleaving can leave a turn stuck.
  drain(): void {
    for (let guard = 0; this.queued.length + this.live.length > 0; guard++) {
      expect(guard).toBeLessThan(1000);
      for (const r of this.live) this.admission.release(r.turnId);
      this.live = [];
      this.#next();
      this.checkInvariants();
    }
  }
}

describe('admission model', () => {
  it('keeps the limit, session, lock and FIFO invariants under random interleavings', () => {
    fc.assert(
      fc.property(limits, fc.array(op, { maxLength: 80 }), (lim, ops) => {
        const model = new Model(lim, createAdmission(lim));
        for (const step of ops) {
          model.apply(step);
          model.checkInvariants();
        }
        model.drain();
        expect(model.admission.snapshot().sessions).toEqual([]);
        expect(model.started + model.removed).toBe(model.accepted);
      }),
      { numRuns: 400 },
    );
  });
});
