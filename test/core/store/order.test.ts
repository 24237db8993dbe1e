import { describe, expect, it } from 'vitest';
import { compareIds, compareTimes } from '../../../core/store/index.js';

// Listings order records as localeCompare always did; the code-unit shortcut must never disagree.
const TIMES = [
  '2026-12-02T17:27:54.639Z',
  '2026-12-02T17:27:54.640Z',
  '2026-12-02T09:05:00.000Z',
  '2025-01-31T23:59:59.999Z',
  '2026-12-02T17:27:54Z',
  '2026-12-02T17:27:54.6Z',
  '2026-12-02T18:27:54.639+01:00',
  '2026-12-02T16:27:54.639-01:00',
  '2026-12-02t17:27:54.639z',
];
const IDS = ['s-2ce2d99fd8', 's-30f045ae10', 's-f8a1db967d', 's-0', 's', 'a-b', 'S-ABC', 's_1', 's.1', 'x9', 'x-9', 'imported-1'];

const sign = (n: number) => Math.sign(n);

describe('record order', () => {
  it('orders every pair of times as localeCompare does', () => {
    for (const a of TIMES) for (const b of TIMES) expect([a, b, sign(compareTimes(a, b))]).toEqual([a, b, sign(a.localeCompare(b))]);
  });

  it('orders every pair of session ids as localeCompare does', () => {
    for (const a of IDS) for (const b of IDS) expect([a, b, sign(compareIds(a, b))]).toEqual([a, b, sign(a.localeCompare(b))]);
  });

  it('sorts records written at different times oldest first', () => {
    const shuffled = [TIMES[1]!, TIMES[3]!, TIMES[0]!, TIMES[2]!];
    expect([...shuffled].sort(compareTimes)).toEqual([TIMES[3], TIMES[2], TIMES[0], TIMES[1]]);
  });
});
