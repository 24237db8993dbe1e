import { describe, expect, it } from 'vitest';
import { createAdmission } from '../../../core/orchestrator/index.js';
import { LIMITS, admissionWith, ids, reader, thrown, writer } from './admission-builders.js';

describe('queue bounds', () => {
  it('refuses a turn beyond maxQueuedTotal with queue_full and accepts nothing', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's2', '/w/a')], { maxQueuedTotal: 2 });
    const before = admission.snapshot();
    const error = thrown(() => admission.enqueue(writer('t3', 's3', '/w/a')), 'queue_full');
    expect(error.message).toContain('orchestrator.maxQueuedTotal');
    expect(error.data).toMatchObject({ bound: 'maxQueuedTotal', limit: 2, turnId: 't3' });
    expect(admission.snapshot()).toEqual(before);
    expect(admission.stateOf('t3')).toBeUndefined();
  });

  it('refuses a turn beyond maxQueuedPerSession while other sessions may still queue', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's1', '/w/a')], { maxQueuedPerSession: 2 });
    const before = admission.snapshot();
    const error = thrown(() => admission.enqueue(writer('t3', 's1', '/w/a')), 'queue_full');
    expect(error.message).toContain('orchestrator.maxQueuedPerSession');
    expect(error.message).toContain('session s1');
    expect(admission.snapshot()).toEqual(before);
    expect(admission.enqueue(writer('t4', 's2', '/w/b'))).toEqual({ accepted: true, position: 3 });
  });

  it('counts only queued turns: a started turn frees its queue place', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's1', '/w/a')], { maxQueuedPerSession: 2 });
    admission.next();
    expect(admission.enqueue(writer('t3', 's1', '/w/a')).accepted).toBe(true);
  });

  it('accepts a turn at the bound when it would start at once, since it does not wait', () => {
    const admission = admissionWith([writer('w1', 's1', '/w/a')], { maxQueuedTotal: 1 });
    admission.next();
    admission.enqueue(writer('w2', 's2', '/w/a'));
    expect(admission.snapshot().queued).toHaveLength(1);
    admission.enqueue(reader('r', 's3', '/w/b'));
    expect(ids(admission.next())).toEqual(['r']);
    thrown(() => admission.enqueue(reader('r2', 's4', '/w/a/sub')), 'queue_full');
  });

  it('refuses malformed requests and duplicate turn ids as internal errors', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a')]);
    thrown(() => admission.enqueue(writer('t1', 's2', '/w/b')), 'internal');
    admission.next();
    thrown(() => admission.enqueue(writer('t1', 's2', '/w/b')), 'internal');
    thrown(() => admission.enqueue(writer('t2', 's2', 'relative/path')), 'internal');
    thrown(() => admission.enqueue({ ...writer('t3', 's2', '/w/b'), extra: 1 } as never), 'internal');
    thrown(() => createAdmission({ ...LIMITS, maxConcurrentRuns: 65 }), 'internal');
    thrown(() => createAdmission({ ...LIMITS, maxQueuedTotal: 0 }), 'internal');
  });
});

describe('removing queued turns', () => {
  it('cancels a queued turn and lets the turns behind it move up', () => {
    const admission = admissionWith([writer('w1', 's1', '/w/a'), writer('w2', 's2', '/w/a'), writer('w3', 's3', '/w/a')]);
    admission.next();
    expect(admission.cancelQueued('w2')).toEqual(writer('w2', 's2', '/w/a'));
    expect(admission.cancelQueued('w2')).toBeUndefined();
    expect(admission.cancelQueued('w1')).toBeUndefined();
    admission.release('w1');
    expect(ids(admission.next())).toEqual(['w3']);
  });

  it('supersedes a session’s older queued turns in queue order, keeping the new one and other sessions', () => {
    const admission = admissionWith([
      writer('live', 's1', '/w/a'),
      writer('old1', 's1', '/w/a'),
      writer('other', 's2', '/w/b'),
      writer('old2', 's1', '/w/a'),
      writer('new', 's1', '/w/a'),
    ]);
    admission.next();
    expect(ids(admission.supersede('s1', 'new'))).toEqual(['old1', 'old2']);
    expect(ids(admission.snapshot().queued)).toEqual(['new']);
    expect(admission.stateOf('other')).toBe('live');
    admission.release('live');
    expect(ids(admission.next())).toEqual(['new']);
  });

  it('supersedes every queued turn of the session without a newer turn, and refuses a foreign one', () => {
    const admission = admissionWith([writer('a', 's1', '/w/a'), writer('b', 's1', '/w/a'), writer('c', 's2', '/w/b')]);
    thrown(() => admission.supersede('s1', 'c'), 'internal');
    thrown(() => admission.supersede('s1', 'missing'), 'internal');
    expect(ids(admission.supersede('s1'))).toEqual(['a', 'b']);
    expect(ids(admission.snapshot().queued)).toEqual(['c']);
  });

  it('drops a session’s queued turns and leaves its live turn live', () => {
    const admission = admissionWith([
      writer('t1', 's1', '/w/a'),
      writer('t2', 's1', '/w/a'),
      writer('t3', 's1', '/w/a'),
      writer('x', 's2', '/w/a'),
    ]);
    admission.next();
    expect(ids(admission.dropSession('s1'))).toEqual(['t2', 't3']);
    expect(admission.dropSession('s1')).toEqual([]);
    expect(admission.stateOf('t1')).toBe('live');
    admission.release('t1');
    expect(ids(admission.next())).toEqual(['x']);
  });
});

describe('snapshot', () => {
  it('shows live and queued turns with per-session depth, and forgets idle sessions', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's1', '/w/a'), reader('t3', 's2', '/w/a')]);
    admission.next();
    const snap = admission.snapshot();
    expect(snap.limits).toEqual(LIMITS);
    expect(ids(snap.live)).toEqual(['t1']);
    expect(ids(snap.queued)).toEqual(['t2', 't3']);
    expect(snap.sessions).toEqual([
      { sessionId: 's1', liveTurnId: 't1', queued: 1 },
      { sessionId: 's2', liveTurnId: undefined, queued: 1 },
    ]);
    admission.release('t1');
    for (const turn of admission.next()) admission.release(turn.turnId);
    for (const turn of admission.next()) admission.release(turn.turnId);
    expect(admission.snapshot()).toEqual({ limits: LIMITS, live: [], queued: [], sessions: [] });
  });

  it('hands out requests that cannot change admission state', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's2', '/w/a')]);
    admission.snapshot().queued[0]!.workspace = '/elsewhere';
    expect(admission.snapshot().queued[0]!.workspace).toBe('/w/a');
    const [started] = admission.next();
    expect(() => Object.assign(started!, { workspace: '/elsewhere' })).toThrow(TypeError);
    admission.release('t1');
    expect(ids(admission.next())).toEqual(['t2']);
  });
});
