import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createTtlCache } from '../../../core/catalog/index.js';
import { Redactor } from '../../../core/redact.js';

const ValueSchema = z.strictObject({ items: z.array(z.string()) });
type Value = z.infer<typeof ValueSchema>;

let root: string;
let dir: string;
let clock: number;
const now = (): number => clock;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ow-ttl-'));
  dir = join(root, 'catalog');
  clock = 1_000_000;
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

// A refresh that counts its calls and returns `items`, or fails with `error`.
function counter(items: string[] = ['a'], error?: Error): { refresh: () => Promise<Value>; calls: () => number } {
  let calls = 0;
  return {
    refresh: async () => {
      calls++;
      if (error) throw error;
      return { items: [...items, `call-${calls}`] };
    },
    calls: () => calls,
  };
}

const cache = (ttlMs = 60_000, redact?: (v: Value) => Value) =>
  createTtlCache<Value>({ dir, schema: ValueSchema, ttlMs, now, ...(redact ? { redact } : {}) });

describe('createTtlCache', () => {
  it('returns a fresh on-disk entry without refreshing', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'k1.json'), JSON.stringify({ key: 'k1', fetchedAt: clock - 59_999, value: { items: ['from-disk'] } }));
    const { refresh, calls } = counter();
    const got = await cache().get('k1', refresh);
    expect(got).toEqual({ value: { items: ['from-disk'] }, fetchedAt: clock - 59_999, fromCache: true });
    expect(calls()).toBe(0);
  });

  it('refreshes when there is no entry, then serves the written entry within the TTL', async () => {
    const { refresh, calls } = counter();
    const first = await cache().get('k2', refresh);
    expect(first).toEqual({ value: { items: ['a', 'call-1'] }, fetchedAt: clock, fromCache: false });
    clock += 30_000;
    const second = await cache().get('k2', refresh);
    expect(second).toEqual({ value: { items: ['a', 'call-1'] }, fetchedAt: clock - 30_000, fromCache: true });
    expect(calls()).toBe(1);
    const onDisk = JSON.parse(await readFile(join(dir, 'k2.json'), 'utf8'));
    expect(onDisk).toEqual({ key: 'k2', fetchedAt: clock - 30_000, value: { items: ['a', 'call-1'] } });
  });

  it('refreshes an expired entry', async () => {
    const { refresh, calls } = counter();
    await cache(1_000).get('k3', refresh);
    clock += 1_000;
    const got = await cache(1_000).get('k3', refresh);
    expect(calls()).toBe(2);
    expect(got).toMatchObject({ value: { items: ['a', 'call-2'] }, fromCache: false, fetchedAt: clock });
  });

  it('refreshes a fresh entry when forced', async () => {
    const { refresh, calls } = counter();
    await cache().get('k4', refresh);
    const got = await cache().get('k4', refresh, { force: true });
    expect(calls()).toBe(2);
    expect(got.value.items).toEqual(['a', 'call-2']);
  });

  it('does not trust an entry stamped in the future', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'k5.json'), JSON.stringify({ key: 'k5', fetchedAt: clock + 5_000, value: { items: ['future'] } }));
    const { refresh, calls } = counter();
    expect((await cache().get('k5', refresh)).value.items).toEqual(['a', 'call-1']);
    expect(calls()).toBe(1);
  });

  it('treats a malformed entry as missing and replaces it', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'k6.json'), '{"key":"k6","fetchedAt":');
    await writeFile(join(dir, 'k7.json'), JSON.stringify({ key: 'k7', fetchedAt: clock, value: { items: [42] } }));
    const a = counter();
    const b = counter();
    expect((await cache().get('k6', a.refresh)).fromCache).toBe(false);
    expect((await cache().get('k7', b.refresh)).fromCache).toBe(false);
    expect(a.calls() + b.calls()).toBe(2);
    expect(JSON.parse(await readFile(join(dir, 'k6.json'), 'utf8')).value).toEqual({ items: ['a', 'call-1'] });
  });

  it('runs one refresh for N concurrent callers, even across cache instances', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let calls = 0;
    const refresh = async (): Promise<Value> => {
      calls++;
      await gate;
      return { items: ['shared'] };
    };
    const callers = Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? cache() : cache()).get('k8', refresh));
    // The refresh cannot finish before every caller has called get().
    release();
    const results = await Promise.all(callers);
    expect(calls).toBe(1);
    for (const result of results) expect(result.value).toEqual({ items: ['shared'] });
  });

  it('refreshes for a forced call that arrives during a plain lookup, and lets plain calls join a forced one', async () => {
    const { refresh, calls } = counter();
    await cache().get('k12', refresh);
    const [plain, forced] = await Promise.all([cache().get('k12', refresh), cache().get('k12', refresh, { force: true })]);
    expect(plain).toMatchObject({ fromCache: true, value: { items: ['a', 'call-1'] } });
    expect(forced).toMatchObject({ fromCache: false, value: { items: ['a', 'call-2'] } });
    const [forcedAgain, joined] = await Promise.all([cache().get('k12', refresh, { force: true }), cache().get('k12', refresh)]);
    expect(calls()).toBe(3);
    expect(joined).toEqual(forcedAgain);
  });

  it('rejects every caller of a failed refresh and never serves the expired entry', async () => {
    const good = counter(['old']);
    await cache(1_000).get('k9', good.refresh);
    const before = await readFile(join(dir, 'k9.json'), 'utf8');
    clock += 5_000;
    const failure = new Error('cli crashed');
    const bad = counter([], failure);
    const results = await Promise.allSettled([cache(1_000).get('k9', bad.refresh), cache(1_000).get('k9', bad.refresh)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    for (const r of results) expect((r as PromiseRejectedResult).reason).toBe(failure);
    expect(bad.calls()).toBe(1);
    expect(await readFile(join(dir, 'k9.json'), 'utf8')).toBe(before);
    // The next call tries again instead of falling back to the expired entry.
    const retried = await cache(1_000).get('k9', counter(['new']).refresh);
    expect(retried).toMatchObject({ value: { items: ['new', 'call-1'] }, fromCache: false });
  });

  it('writes entries with mode 0600 in a 0700 directory', async () => {
    await cache().get('k10', counter().refresh);
    expect((await stat(join(dir, 'k10.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(dir)).mode & 0o777).toBe(0o700);
  });

  it('passes refreshed values through the redactor before writing and returning them', async () => {
    const redactor = new Redactor();
    redactor.register('sk-very-secret-1234');
    const refresh = async (): Promise<Value> => ({ items: ['key sk-very-secret-1234 here', 'plain'] });
    const got = await cache(60_000, (v) => redactor.redactValue(v)).get('k11', refresh);
    expect(got.value.items).toEqual(['key [REDACTED] here', 'plain']);
    const text = await readFile(join(dir, 'k11.json'), 'utf8');
    expect(text).not.toContain('sk-very-secret-1234');
    expect(text).toContain('[REDACTED]');
  });

  it('getAllowingStale: serves an entry past its TTL by less than the bound as stale, without refreshing', async () => {
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'k12.json'), JSON.stringify({ key: 'k12', fetchedAt: clock - 60_000 - 9_999, value: { items: ['old'] } }));
    const { refresh, calls } = counter();
    expect(await cache().getAllowingStale('k12', refresh, 10_000)).toEqual({
      value: { items: ['old'] },
      fetchedAt: clock - 69_999,
      fromCache: true,
      stale: true,
    });
    expect(calls()).toBe(0);
    // The caller's refresh (`get`) lists it; the next call gets the fresh entry, not stale.
    await cache().get('k12', refresh);
    expect(await cache().getAllowingStale('k12', refresh, 10_000)).toEqual({
      value: { items: ['a', 'call-1'] },
      fetchedAt: clock,
      fromCache: true,
    });
    expect(calls()).toBe(1);
  });

  it('getAllowingStale: refreshes (and waits) for a missing entry or one past the bound, never serving it', async () => {
    const missing = counter(['new']);
    expect(await cache().getAllowingStale('k13', missing.refresh, 10_000)).toEqual({
      value: { items: ['new', 'call-1'] },
      fetchedAt: clock,
      fromCache: false,
    });
    clock += 60_000 + 10_000;
    const old = counter(['newer']);
    expect(await cache().getAllowingStale('k13', old.refresh, 10_000)).toEqual({
      value: { items: ['newer', 'call-1'] },
      fetchedAt: clock,
      fromCache: false,
    });
    // A failed refresh of an entry past the bound rejects: the old one is not served.
    clock += 60_000 + 10_000;
    await expect(cache().getAllowingStale('k13', counter([], new Error('down')).refresh, 10_000)).rejects.toThrow('down');
  });

  it('refuses keys that are not plain file names', async () => {
    const { refresh, calls } = counter();
    await expect(cache().get('../escape', refresh)).rejects.toMatchObject({ code: 'internal' });
    expect(calls()).toBe(0);
  });
});
