import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { lazySchema, warmLazySchemas } from '../../core/lazy-schema.js';
import { compileQuickCheck, warmQuickChecks } from '../../core/schema-check.js';

// The orchestrator builds, in its idle time, what its first turns would otherwise build on their
// way (cli/daemon/serve-main.ts): every lazy schema and quick check of the modules it loaded.

describe('warming schemas up ahead of their first use', () => {
  it('builds every lazy schema not used yet, once, and leaves what it parses unchanged', async () => {
    let builds = 0;
    const schema = lazySchema(() => {
      builds += 1;
      return z.object({ name: z.string() });
    });
    expect(builds).toBe(0);
    await warmLazySchemas();
    expect(builds).toBe(1);
    expect(schema.parse({ name: 'a' })).toEqual({ name: 'a' });
    expect(schema.safeParse({}).success).toBe(false);
    await warmLazySchemas();
    expect(builds).toBe(1);
  });

  it('compiles every quick check not called yet, which then answers as before', async () => {
    let builds = 0;
    const check = compileQuickCheck(
      lazySchema(() => {
        builds += 1;
        return z.object({ n: z.number() });
      }),
    );
    await warmQuickChecks();
    expect(builds).toBe(1);
    expect(check({ n: 1 })).toBe(true);
    expect(check({ n: 'x' })).toBe(false);
    expect(builds).toBe(1);
  });
});
