import * as crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { bearerMatches } from '../../../cli/mcp/http-guard.js';

// The token comparison never short-circuits on length: whatever was presented, timingSafeEqual
// compares two 32-byte digests (and is always called).
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const TOKEN = 't'.repeat(40);

describe('bearerMatches timing', () => {
  it('calls timingSafeEqual with two 32-byte buffers for missing, short, long, wrong and right tokens', () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    const cases: Array<[string | undefined, boolean]> = [
      [undefined, false],
      ['', false],
      ['Bearer', false],
      ['Bearer t', false],
      [`Bearer ${TOKEN}${'t'.repeat(500)}`, false],
      [`Bearer ${'u'.repeat(40)}`, false],
      [`Bearer ${TOKEN}`, true],
    ];
    for (const [header, expected] of cases) {
      spy.mockClear();
      expect(bearerMatches(header, TOKEN), String(header)).toBe(expected);
      expect(spy, String(header)).toHaveBeenCalledTimes(1);
      const [presented, wanted] = spy.mock.calls[0]! as unknown as [Buffer, Buffer];
      expect([presented.length, wanted.length], String(header)).toEqual([32, 32]);
    }
  });
});
