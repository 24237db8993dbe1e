import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isValidRuntimeEvent, RuntimeEventSchema } from '../../core/events/index.js';
import { lazySchema } from '../../core/lazy-schema.js';
import { compileQuickCheck } from '../../core/schema-check.js';

// A quick check may answer `false` for a valid value (the schema then decides), never `true` for
// a value the schema refuses.

describe('compileQuickCheck', () => {
  const cases: Array<[string, z.ZodType, unknown[]]> = [
    ['finite numbers', z.number(), [1, -2.5, Number.NaN, Number.POSITIVE_INFINITY, '1', null]],
    ['safe integers, not negative', z.number().int().nonnegative(), [0, 3, -1, 1.5, 2 ** 60, Number.NaN]],
    ['strings with a minimum', z.string().min(2), ['ab', 'a', '', 3]],
    ['literals and enums', z.union([z.literal('a'), z.enum(['b', 'c'])]), ['a', 'b', 'c', 'd', undefined]],
    [
      'objects: required unknown keys must be present',
      z.object({ a: z.unknown(), b: z.string().optional() }),
      [{ a: 1 }, {}, { a: undefined }, { a: 1, b: 2 }, { a: 1, b: undefined }, [], null],
    ],
    ['loose objects', z.looseObject({ a: z.string() }), [{ a: 'x', more: 1 }, { a: 1 }, Object.create({ a: 'inherited' })]],
    ['records of strings', z.record(z.string(), z.string()), [{ a: 'x' }, { a: 1 }, Object.create(null), new (class X {})(), []]],
    ['arrays', z.array(z.number()), [[1, 2], [1, 'x'], new Array(2), 'no']],
    ['nullable and optional', z.string().nullable().optional(), [null, undefined, 'x', 1]],
    [
      'discriminated unions',
      z.discriminatedUnion('t', [z.object({ t: z.literal('a'), n: z.number() }), z.object({ t: z.literal('b') })]),
      [{ t: 'a', n: 1 }, { t: 'a' }, { t: 'b' }, { t: 'c' }],
    ],
    [
      'lazy schemas, as what they build (an optional field too)',
      lazySchema(() => z.object({ a: z.number(), b: lazySchema(() => z.string().optional()) })),
      [{ a: 1 }, { a: 1, b: 'x' }, { a: 1, b: 2 }, { b: 'x' }, null],
    ],
  ];
  for (const [name, schema, values] of cases) {
    it(`agrees with the schema on ${name}`, () => {
      const check = compileQuickCheck(schema);
      for (const [i, value] of values.entries()) {
        const valid = schema.safeParse(value).success;
        if (check(value)) expect(valid, `value ${i}`).toBe(true);
        // Valid values of these simple shapes do take the shortcut.
        if (valid) expect(check(value), `value ${i}`).toBe(true);
      }
    });
  }

  it('leaves what it does not understand to the schema', () => {
    expect(compileQuickCheck(z.strictObject({ a: z.string() }))({ a: 'x' })).toBe(false);
    expect(compileQuickCheck(z.string().transform((s) => s.length))('x')).toBe(false);
    expect(compileQuickCheck(z.string().refine((s) => s !== 'bad'))('x')).toBe(false);
    expect(compileQuickCheck(z.number().default(1))(2)).toBe(false);
  });

  it('leaves a recursive schema to the schema, and builds a lazy one only when first called', () => {
    let builds = 0;
    const Tree: z.ZodType = lazySchema(() => {
      builds += 1;
      return z.object({ name: z.string(), children: z.array(Tree) });
    });
    const check = compileQuickCheck(Tree);
    expect(builds).toBe(0);
    const tree = { name: 'a', children: [{ name: 'b', children: [] }] };
    expect(Tree.safeParse(tree).success).toBe(true);
    expect(check(tree)).toBe(false);
    expect(check({ name: 1, children: [] })).toBe(false);
    expect(builds).toBe(1);
  });
});

describe('isValidRuntimeEvent', () => {
  const dir = join(import.meta.dirname, '..', 'fixtures', 'droid', '0.225.2');
  const events = readdirSync(dir)
    .filter((f) => f.endsWith('.events.json'))
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Array<{ event?: Record<string, unknown> }>)
    .flatMap((entry, i) => (entry.event ? [{ ...entry.event, sessionId: 's-1', seq: i + 1, at: '2026-12-01T00:00:00.000Z' }] : []));

  it('passes every recorded event of the corpus, stamped', () => {
    expect(events.length).toBeGreaterThan(200);
    for (const event of events) expect(isValidRuntimeEvent(event), JSON.stringify(event)).toBe(true);
  });

  it('never passes an event the schema refuses, after random damage', () => {
    const damage = (event: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> => ({ ...event, [key]: value });
    fc.assert(
      fc.property(
        fc.nat({ max: events.length - 1 }),
        fc.nat({ max: 20 }),
        fc.oneof(
          fc.constant(undefined),
          fc.constant(null),
          fc.string({ maxLength: 3 }),
          fc.integer(),
          fc.double(),
          fc.boolean(),
          fc.constant({}),
          fc.constant([]),
        ),
        (index, pick, value) => {
          const event = events[index]!;
          const keys = Object.keys(event);
          const damaged = damage(event, keys[pick % keys.length]!, value);
          if (isValidRuntimeEvent(damaged)) expect(RuntimeEventSchema.safeParse(damaged).success).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });
});
