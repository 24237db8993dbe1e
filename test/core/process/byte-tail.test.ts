import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ByteTail } from '../../../core/process/index.js';

describe('ByteTail', () => {
  it('holds exactly the last maxBytes bytes of whatever was pushed', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 64 }), fc.array(fc.uint8Array({ maxLength: 100 })), (maxBytes, chunks) => {
        const tail = new ByteTail(maxBytes);
        for (const chunk of chunks) tail.push(Buffer.from(chunk));
        const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
        const expected = all.subarray(Math.max(0, all.length - maxBytes));
        expect(tail.byteLength).toBe(expected.length);
        expect(tail.text()).toBe(expected.toString('utf8'));
      }),
    );
  });

  it('refuses a non-positive bound', () => {
    expect(() => new ByteTail(0)).toThrow(RangeError);
  });
});
