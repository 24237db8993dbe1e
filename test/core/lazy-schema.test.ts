import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';

// The modules whose schemas are built on first use: each lazy schema they export must parse,
// refuse and describe itself (JSON Schema, as MCP tools advertise it) exactly as the schema it
// builds does.
const MODULES: Record<string, () => Promise<Record<string, unknown>>> = {
  'core/events/schema.ts': () => import('../../core/events/schema.js'),
  'core/permissions/ask-board.ts': () => import('../../core/permissions/ask-board.js'),
  'core/config/lock.ts': () => import('../../core/config/lock.js'),
  'core/store/records.ts': () => import('../../core/store/records.js'),
  'core/orchestrator/request-keys.ts': () => import('../../core/orchestrator/request-keys.js'),
  'core/orchestrator/turn-handle-schema.ts': () => import('../../core/orchestrator/turn-handle-schema.js'),
  'cli/daemon/wire.ts': () => import('../../cli/daemon/wire.js'),
  'cli/daemon/escalations.ts': () => import('../../cli/daemon/escalations.js'),
  'adapters/droid/wire.ts': () => import('../../adapters/droid/wire.js'),
  'adapters/droid/notifications.ts': () => import('../../adapters/droid/notifications.js'),
  'adapters/droid/session-params.ts': () => import('../../adapters/droid/session-params.js'),
  'adapters/droid/oneshot.ts': () => import('../../adapters/droid/oneshot.js'),
  'adapters/droid/import/journal-schema.ts': () => import('../../adapters/droid/import/journal-schema.js'),
  'adapters/codex/wire.ts': () => import('../../adapters/codex/wire.js'),
  'adapters/claude-code/wire.ts': () => import('../../adapters/claude-code/wire.js'),
};

type Lazy = z.ZodType & { _zod: { def: { type: string; getter: () => z.ZodType } } };

// The lazy schemas a module exports, and those of an exported table of them (droid's notification schemas by type).
function lazyExports(module: Record<string, unknown>): Array<[string, Lazy]> {
  const isLazy = (value: unknown): value is Lazy => value instanceof z.ZodType && (value as Lazy)._zod.def.type === 'lazy';
  return Object.entries(module).flatMap(([name, value]): Array<[string, Lazy]> => {
    if (isLazy(value)) return [[name, value]];
    if (value === null || typeof value !== 'object' || value instanceof z.ZodType) return [];
    return Object.entries(value).flatMap(([key, inner]): Array<[string, Lazy]> => (isLazy(inner) ? [[`${name}.${key}`, inner]] : []));
  });
}

// Values near the schemas' shapes (objects with their keys, wrong types, extra keys) and random ones.
function samples(schema: z.ZodType): fc.Arbitrary<unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as { properties?: Record<string, unknown> };
  const keys = Object.keys(json.properties ?? {});
  const near =
    keys.length === 0
      ? fc.anything()
      : fc.dictionary(fc.constantFrom(...keys, 'type', 'extra'), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(undefined)));
  return fc.oneof(near, fc.anything());
}

describe('lazySchema', () => {
  it('builds its schema on first use, once', () => {
    let builds = 0;
    const schema = lazySchema(() => {
      builds += 1;
      return z.strictObject({ a: z.string() });
    });
    const holder = z.object({ inner: schema.optional() });
    expect(builds).toBe(0);
    expect(holder.safeParse({ inner: { a: 'x' } }).success).toBe(true);
    expect(schema.safeParse({ a: 1 }).success).toBe(false);
    expect(schema.safeParse({ a: 'x', b: 1 }).success).toBe(false);
    expect(builds).toBe(1);
  });

  it('keeps an optional field optional in the object that holds it (parse and JSON Schema)', () => {
    const eager = z.strictObject({ a: z.string().optional(), b: z.number() });
    const lazy = z.strictObject({ a: lazySchema(() => z.string().optional()), b: z.number() });
    for (const value of [{ b: 1 }, { a: 'x', b: 1 }, { a: 1, b: 1 }, { a: 'x' }, { b: 1, c: 2 }]) {
      expect(lazy.safeParse(value)).toEqual(eager.safeParse(value));
    }
    expect(z.toJSONSchema(lazy)).toEqual(z.toJSONSchema(eager));
  });

  for (const [file, load] of Object.entries(MODULES)) {
    it(`${file}: every lazy schema accepts, refuses and describes exactly as the schema it builds`, async () => {
      const lazies = lazyExports(await load());
      expect(lazies.length).toBeGreaterThan(0);
      for (const [name, lazy] of lazies) {
        // A second build of the same definition, made eagerly, to compare with.
        const eager = lazy._zod.def.getter();
        expect(z.toJSONSchema(lazy, { io: 'input', unrepresentable: 'any' }), name).toEqual(
          z.toJSONSchema(eager, { io: 'input', unrepresentable: 'any' }),
        );
        expect(z.toJSONSchema(lazy, { io: 'output', unrepresentable: 'any' }), name).toEqual(
          z.toJSONSchema(eager, { io: 'output', unrepresentable: 'any' }),
        );
        fc.assert(
          fc.property(samples(eager), (value) => {
            const a = lazy.safeParse(value);
            const b = eager.safeParse(value);
            expect(a.success, name).toBe(b.success);
            if (a.success && b.success) expect(a.data, name).toEqual(b.data);
            else expect(a.error?.issues, name).toEqual(b.error?.issues);
          }),
          { numRuns: 200 },
        );
      }
    });
  }
});
