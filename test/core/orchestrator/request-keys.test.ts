import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isOneWorksError } from '../../../core/errors.js';
import {
  RequestKeyRegistry,
  canonicalJson,
  hashRequestArgs,
  type RequestKeyEntry,
  type RequestKeyPersistence,
} from '../../../core/orchestrator/index.js';

const HandleSchema = z.strictObject({ sessionId: z.string() });
type Handle = z.infer<typeof HandleSchema>;

// An in-memory persistence that round-trips through JSON, as a file would.
function memoryPersistence(
  initial: Record<string, unknown> = {},
): RequestKeyPersistence & { saved: RequestKeyEntry[]; data: Record<string, unknown> } {
  const data: Record<string, unknown> = JSON.parse(JSON.stringify(initial));
  const saved: RequestKeyEntry[] = [];
  return {
    data,
    saved,
    load: async () => JSON.parse(JSON.stringify(data)),
    save: async (entry) => {
      saved.push(entry);
      data[entry.key] = JSON.parse(JSON.stringify({ argsHash: entry.argsHash, handle: entry.handle, pending: entry.pending }));
    },
    remove: async (key) => {
      delete data[key];
    },
  };
}

function counter(): { make: () => Promise<Handle>; calls: () => number } {
  let n = 0;
  return { make: async () => ({ sessionId: `sess-${++n}` }), calls: () => n };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('RequestKeyRegistry', () => {
  it('returns the original handle for the same key and arguments, whatever their key order', async () => {
    const registry = await RequestKeyRegistry.open(memoryPersistence(), HandleSchema);
    const handles = counter();
    const first = await registry.claim('k1', { op: 'create', workspace: '/w', autonomy: 'low' }, handles.make);
    const again = await registry.claim('k1', { autonomy: 'low', workspace: '/w', op: 'create' }, handles.make);
    expect(again).toEqual(first);
    expect(handles.calls()).toBe(1);
    expect(registry.lookup('k1')).toEqual(first);
  });

  it('refuses the same key with different arguments as request_key_conflict', async () => {
    const registry = await RequestKeyRegistry.open(memoryPersistence(), HandleSchema);
    const handles = counter();
    await registry.claim('k1', { op: 'send', sessionId: 's1', message: 'hi' }, handles.make);
    const error = await rejection(registry.claim('k1', { op: 'send', sessionId: 's1', message: 'bye' }, handles.make));
    expect(isOneWorksError(error, 'request_key_conflict')).toBe(true);
    expect((error as Error).message).toContain('"k1"');
    expect(handles.calls()).toBe(1);
  });

  it('keeps claims across a reload from persistence', async () => {
    const persistence = memoryPersistence();
    const handles = counter();
    const first = await (await RequestKeyRegistry.open(persistence, HandleSchema)).claim('k1', { op: 'create' }, handles.make);
    expect(persistence.saved).toEqual([{ key: 'k1', argsHash: hashRequestArgs({ op: 'create' }), handle: first }]);
    const reopened = await RequestKeyRegistry.open(persistence, HandleSchema);
    expect(await reopened.claim('k1', { op: 'create' }, handles.make)).toEqual(first);
    expect(isOneWorksError(await rejection(reopened.claim('k1', { op: 'other' }, handles.make)), 'request_key_conflict')).toBe(true);
    expect(handles.calls()).toBe(1);
  });

  it('makes one handle for concurrent claims of a new key', async () => {
    const registry = await RequestKeyRegistry.open(memoryPersistence(), HandleSchema);
    const handles = counter();
    const results = await Promise.all([1, 2, 3].map(() => registry.claim('k', { op: 'create' }, handles.make)));
    expect(new Set(results.map((h) => h.sessionId)).size).toBe(1);
    expect(handles.calls()).toBe(1);
  });

  it('leaves the key unclaimed when making the handle or saving it fails', async () => {
    const persistence = memoryPersistence();
    let failSave = true;
    const flaky: RequestKeyPersistence = {
      load: persistence.load,
      save: async (entry) => {
        if (failSave) throw new Error('disk full');
        await persistence.save(entry);
      },
      remove: persistence.remove,
    };
    const registry = await RequestKeyRegistry.open(flaky, HandleSchema);
    await expect(registry.claim('k', { op: 'create' }, () => Promise.reject(new Error('spawn failed')))).rejects.toThrow('spawn failed');
    await expect(registry.claim('k', { op: 'create' }, () => ({ sessionId: 'a' }))).rejects.toThrow('disk full');
    expect(registry.lookup('k')).toBeUndefined();
    failSave = false;
    expect(await registry.claim('k', { op: 'other' }, () => ({ sessionId: 'b' }))).toEqual({ sessionId: 'b' });
  });

  it('refuses malformed keys, non-JSON arguments and invalid handles', async () => {
    const registry = await RequestKeyRegistry.open(memoryPersistence(), HandleSchema);
    const make = () => ({ sessionId: 'x' });
    expect(isOneWorksError(await rejection(registry.claim('', {}, make)), 'usage')).toBe(true);
    expect(isOneWorksError(await rejection(registry.claim('x'.repeat(257), {}, make)), 'usage')).toBe(true);
    expect(isOneWorksError(await rejection(registry.claim('k', { at: new Date(0) }, make)), 'usage')).toBe(true);
    expect(isOneWorksError(await rejection(registry.claim('k', { n: Number.NaN }, make)), 'usage')).toBe(true);
    expect(isOneWorksError(await rejection(registry.claim('k', {}, () => ({ id: 1 }) as never)), 'internal')).toBe(true);
    expect(registry.lookup('k')).toBeUndefined();
  });

  it('reports a malformed saved claim as state_corrupt', async () => {
    for (const bad of [{ argsHash: 'nothex', handle: { sessionId: 's' } }, { argsHash: 'a'.repeat(64), handle: { wrong: 1 } }, 'junk']) {
      const error = await rejection(RequestKeyRegistry.open(memoryPersistence({ broken: bad }), HandleSchema));
      expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
      expect((error as Error).message).toContain('"broken"');
    }
  });
});

describe('canonicalJson', () => {
  const json = fc.jsonValue({ maxDepth: 3 });

  it('is stable under key order and parses back to the same value', () => {
    fc.assert(
      fc.property(json, (value) => {
        const shuffled = JSON.parse(
          JSON.stringify(value, (_k, v: unknown) =>
            v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
          ),
        );
        expect(canonicalJson(shuffled)).toBe(canonicalJson(value));
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('gives different hashes to different values', () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b));
        expect(hashRequestArgs(a)).not.toBe(hashRequestArgs(b));
      }),
    );
  });

  it('drops undefined members as JSON does', () => {
    expect(canonicalJson({ b: 1, a: undefined, c: [undefined, 2] })).toBe('{"b":1,"c":[null,2]}');
  });
});

describe('RequestKeyRegistry: pending claims across a crash', () => {
  const PendingSchema = z.strictObject({ sessionId: z.string() });

  // A claim that reserves, takes effect (`effects`), and then hangs before its handle is saved:
  // the process "dies" in that window, and a new registry is opened over what was persisted.
  async function crashAfterReserve(persistence: ReturnType<typeof memoryPersistence>, effects: string[], sessionId: string): Promise<void> {
    const registry = await RequestKeyRegistry.open(persistence, HandleSchema, PendingSchema);
    let reserved!: () => void;
    const reservedNow = new Promise<void>((resolve) => (reserved = resolve));
    void registry.claim('k', { op: 'create' }, async (reserve) => {
      await reserve({ sessionId });
      effects.push(sessionId);
      reserved();
      return new Promise<Handle>(() => undefined);
    });
    await reservedNow;
  }

  it('completes a pending claim whose request took effect, so a retry gets the original handle', async () => {
    const persistence = memoryPersistence();
    const effects: string[] = [];
    await crashAfterReserve(persistence, effects, 'sess-1');
    expect(persistence.data.k).toMatchObject({ pending: { sessionId: 'sess-1' } });

    const reopened = await RequestKeyRegistry.open(persistence, HandleSchema, PendingSchema);
    await reopened.settlePending(async (pending) => (effects.includes(pending.sessionId) ? { sessionId: pending.sessionId } : undefined));
    expect(persistence.data.k).toEqual({ argsHash: hashRequestArgs({ op: 'create' }), handle: { sessionId: 'sess-1' } });
    const handles = counter();
    expect(await reopened.claim('k', { op: 'create' }, handles.make)).toEqual({ sessionId: 'sess-1' });
    expect(handles.calls()).toBe(0);
  });

  it('drops a pending claim whose request never took effect, so a retry makes a new handle', async () => {
    const persistence = memoryPersistence();
    await crashAfterReserve(persistence, [], 'sess-1');
    const reopened = await RequestKeyRegistry.open(persistence, HandleSchema, PendingSchema);
    await reopened.settlePending(async () => undefined);
    expect(persistence.data).toEqual({});
    const handles = counter();
    expect(await reopened.claim('k', { op: 'create' }, handles.make)).toEqual({ sessionId: 'sess-1' });
    expect(handles.calls()).toBe(1);
  });

  it('removes the pending claim when the request fails after reserving', async () => {
    const persistence = memoryPersistence();
    const registry = await RequestKeyRegistry.open(persistence, HandleSchema, PendingSchema);
    await expect(
      registry.claim('k', { op: 'create' }, async (reserve) => {
        await reserve({ sessionId: 'sess-1' });
        throw new Error('queue full');
      }),
    ).rejects.toThrow('queue full');
    expect(persistence.data).toEqual({});
  });

  it('refuses a pending claim it cannot read back as state_corrupt', async () => {
    const persistence = memoryPersistence({ k: { argsHash: hashRequestArgs({}), pending: { other: 1 } } });
    await expect(RequestKeyRegistry.open(persistence, HandleSchema, PendingSchema)).rejects.toMatchObject({ code: 'state_corrupt' });
    await expect(
      RequestKeyRegistry.open(memoryPersistence({ k: { argsHash: hashRequestArgs({}) } }), HandleSchema, PendingSchema),
    ).rejects.toMatchObject({ code: 'state_corrupt' });
  });
});
