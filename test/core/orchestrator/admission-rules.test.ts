import { describe, expect, it } from 'vitest';
import { isWriter } from '../../../core/orchestrator/index.js';
import { admissionWith, ids, reader, writer } from './admission-builders.js';

describe('admission capacity', () => {
  it('starts at most maxConcurrentRuns turns and the next one when a slot is released', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's2', '/w/b'), writer('t3', 's3', '/w/c')], {
      maxConcurrentRuns: 2,
    });
    expect(ids(admission.next())).toEqual(['t1', 't2']);
    expect(admission.next()).toEqual([]);
    expect(admission.stateOf('t3')).toBe('queued');
    expect(admission.release('t2')).toBe(true);
    expect(ids(admission.next())).toEqual(['t3']);
  });

  it('reports a release of a turn that is not live as false and frees nothing', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's2', '/w/b')], { maxConcurrentRuns: 1 });
    admission.next();
    expect(admission.release('t2')).toBe(false);
    expect(admission.release('nope')).toBe(false);
    expect(admission.next()).toEqual([]);
  });
});

describe('one live turn per session', () => {
  it('holds a second turn of a session until the first is released, even with free slots', () => {
    const admission = admissionWith([reader('t1', 's1', '/w/a'), reader('t2', 's1', '/w/a')]);
    expect(ids(admission.next())).toEqual(['t1']);
    expect(admission.next()).toEqual([]);
    admission.release('t1');
    expect(ids(admission.next())).toEqual(['t2']);
  });

  it('starts a session’s turns in the order they were sent', () => {
    const admission = admissionWith([reader('t1', 's1', '/w/a'), reader('t2', 's1', '/w/b'), reader('t3', 's1', '/w/c')]);
    const order: string[] = [];
    for (let live = admission.next(); live.length > 0; live = admission.next()) {
      order.push(...ids(live));
      for (const turn of live) admission.release(turn.turnId);
    }
    expect(order).toEqual(['t1', 't2', 't3']);
  });
});

describe('workspace locks', () => {
  it('lets readers share the same and overlapping trees', () => {
    const admission = admissionWith([
      reader('t1', 's1', '/w/a'),
      reader('t2', 's2', '/w/a'),
      reader('t3', 's3', '/w/a/sub'),
      reader('t4', 's4', '/w'),
    ]);
    expect(ids(admission.next())).toEqual(['t1', 't2', 't3', 't4']);
  });

  it.each([
    ['the same tree', '/w/a', '/w/a'],
    ['a descendant', '/w/a', '/w/a/sub/deep'],
    ['an ancestor', '/w/a/sub', '/w'],
  ])('keeps a writer alone on its tree against %s', (_name, held, asked) => {
    const asWriter = admissionWith([writer('t1', 's1', held), writer('t2', 's2', asked)]);
    expect(ids(asWriter.next())).toEqual(['t1']);
    const readerAfterWriter = admissionWith([writer('t1', 's1', held), reader('t2', 's2', asked)]);
    expect(ids(readerAfterWriter.next())).toEqual(['t1']);
    const writerAfterReader = admissionWith([reader('t1', 's1', held), writer('t2', 's2', asked)]);
    expect(ids(writerAfterReader.next())).toEqual(['t1']);
    writerAfterReader.release('t1');
    expect(ids(writerAfterReader.next())).toEqual(['t2']);
  });

  it('does not treat a sibling with a common name prefix as overlapping', () => {
    const admission = admissionWith([writer('t1', 's1', '/w/a'), writer('t2', 's2', '/w/a-evil'), writer('t3', 's3', '/w/ab')]);
    expect(ids(admission.next())).toEqual(['t1', 't2', 't3']);
  });

  it('keeps the lock of a tree until its last holder is released', () => {
    const admission = admissionWith([reader('r1', 's1', '/w/a'), reader('r2', 's2', '/w/a'), writer('w', 's3', '/w/a')]);
    expect(ids(admission.next())).toEqual(['r1', 'r2']);
    admission.release('r1');
    expect(admission.next()).toEqual([]);
    admission.release('r2');
    expect(ids(admission.next())).toEqual(['w']);
  });

  it('maps autonomy off to a reader and every other level to a writer', () => {
    expect(isWriter('off')).toBe(false);
    expect(['low', 'medium', 'high'].map((level) => isWriter(level as 'low'))).toEqual([true, true, true]);
  });
});

describe('FIFO among conflicting requests', () => {
  it('never lets later readers starve a waiting writer', () => {
    const admission = admissionWith([
      reader('r1', 's1', '/w/a'),
      writer('w', 's2', '/w/a'),
      reader('r2', 's3', '/w/a'),
      reader('r3', 's4', '/w/a/sub'),
    ]);
    expect(ids(admission.next())).toEqual(['r1']);
    admission.enqueue(reader('r4', 's5', '/w/a'));
    expect(admission.next()).toEqual([]);
    admission.release('r1');
    expect(ids(admission.next())).toEqual(['w']);
    admission.release('w');
    expect(ids(admission.next())).toEqual(['r2', 'r3', 'r4']);
  });

  it('starts conflicting writers one after another in arrival order', () => {
    const admission = admissionWith([writer('w1', 's1', '/w/a/sub'), writer('w2', 's2', '/w'), writer('w3', 's3', '/w/a')]);
    const order: string[] = [];
    for (let live = admission.next(); live.length > 0; live = admission.next()) {
      expect(live).toHaveLength(1);
      order.push(live[0]!.turnId);
      admission.release(live[0]!.turnId);
    }
    expect(order).toEqual(['w1', 'w2', 'w3']);
  });

  it('lets a later request that conflicts with nothing ahead pass a blocked one', () => {
    const admission = admissionWith([
      writer('w1', 's1', '/w/a'),
      writer('w2', 's2', '/w/a'),
      reader('r', 's3', '/w/b'),
      writer('w3', 's4', '/w/c'),
    ]);
    expect(ids(admission.next())).toEqual(['w1', 'r', 'w3']);
    expect(admission.stateOf('w2')).toBe('queued');
  });

  it('holds a request that conflicts with an earlier waiting one even when the live locks allow it', () => {
    // w2 waits for s1's live turn (same session); r conflicts with w2 only, so it waits too.
    const admission = admissionWith([reader('t1', 's1', '/w/x'), writer('w2', 's1', '/w/a'), reader('r', 's2', '/w/a/sub')]);
    expect(ids(admission.next())).toEqual(['t1']);
    expect(admission.stateOf('r')).toBe('queued');
    admission.release('t1');
    expect(ids(admission.next())).toEqual(['w2']);
    expect(admission.stateOf('r')).toBe('queued');
  });
});

describe('holds outside the queue (merge into a checkout)', () => {
  it('is refused while a live turn or another hold overlaps, naming the holder', () => {
    const admission = admissionWith([reader('t1', 's1', '/repo/sub')]);
    admission.next();
    expect(admission.hold('a merge of s9', ['/repo', '/state/wt/s9'])).toEqual({ heldBy: 'session s1' });
    admission.release('t1');
    const held = admission.hold('a merge of s9', ['/repo', '/state/wt/s9']);
    expect('release' in held).toBe(true);
    expect(admission.hold('a merge of s8', ['/repo'])).toEqual({ heldBy: 'a merge of s9' });
    expect('release' in admission.hold('a merge of s7', ['/other'])).toBe(true);
  });

  it('makes overlapping turns wait until it is released; others pass', () => {
    const admission = admissionWith([]);
    const held = admission.hold('a merge', ['/repo', '/state/wt/s9']);
    if (!('release' in held)) throw new Error('hold refused');
    admission.enqueue(writer('t1', 's1', '/repo'));
    admission.enqueue(reader('t2', 's9', '/state/wt/s9'));
    admission.enqueue(writer('t3', 's3', '/elsewhere'));
    expect(ids(admission.next())).toEqual(['t3']);
    held.release();
    held.release();
    expect(ids(admission.next())).toEqual(['t1', 't2']);
  });
});
