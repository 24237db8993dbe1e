import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createOrchestrator,
  hashRequestArgs,
  REQUEST_KEYS_FILE,
  startOrchestrator,
  type Orchestrator,
} from '../../../core/orchestrator/index.js';
import { normalizeRequestArgs } from '../../../core/orchestrator/request-keys.js';
import { sessionDir, type RunRecord, type SessionRecord, type Store } from '../../../core/store/index.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// A session record as an owner that died mid-way leaves it.
function leftBehind(id: string, workspace: string, runs: RunRecord[]): SessionRecord {
  const at = '2026-01-01T00:00:00.000Z';
  return { id, adapter: 'fake', workspace, createdAt: at, updatedAt: at, status: 'working', runs };
}

async function withSecond<T>(start: () => Promise<Orchestrator>, body: (o: Orchestrator) => Promise<T>): Promise<T> {
  const orchestrator = await start();
  try {
    return await body(orchestrator);
  } finally {
    await orchestrator.shutdown();
  }
}

describe('orchestrator: start after a crash', () => {
  it('marks queued runs queue_lost and running ones unknown, refusing that session until reconciled', async () => {
    const h = await harnesses({ fake: {} });
    await h.orchestrator.shutdown();
    const done: RunRecord = { id: 'r1', prompt: 'a', autonomy: 'low', status: 'completed', reason: 'completed' };
    await h.session.store.writeSession(
      leftBehind('s-aaaaaaaaaa', h.root, [
        done,
        { id: 'r2', prompt: 'b', autonomy: 'low', status: 'running' },
        { id: 'r3', prompt: 'c', autonomy: 'low', status: 'queued' },
      ]),
    );
    await h.session.store.writeSession(
      leftBehind('s-bbbbbbbbbb', await h.dir('b'), [{ id: 'r1', prompt: 'q', autonomy: 'low', status: 'queued' }]),
    );

    await withSecond(
      () => createOrchestrator(h.deps),
      async (o) => {
        const unknown = await o.status('s-aaaaaaaaaa');
        expect(unknown).toMatchObject({
          state: 'needs_attention',
          queueDepth: 0,
          latestRun: { runId: 'r3', status: 'cancelled', reason: 'queue_lost' },
        });
        expect((await h.session.store.readSession('s-aaaaaaaaaa')).runs[1]).toMatchObject({ status: 'unknown', reason: 'owner_died' });
        await expect(o.sendMessage({ sessionId: 's-aaaaaaaaaa', prompt: 'go on' })).rejects.toMatchObject({
          code: 'session_unknown_outcome',
        });
        expect((await h.session.store.readSession('s-aaaaaaaaaa')).runs).toHaveLength(3);

        // The lost queued turn is never replayed; a new message runs normally.
        expect(await o.status('s-bbbbbbbbbb')).toMatchObject({
          state: 'idle',
          latestRun: { runId: 'r1', status: 'cancelled', reason: 'queue_lost' },
        });
        const next = await o.sendMessage({ sessionId: 's-bbbbbbbbbb', prompt: 'again' });
        expect(next.runId).toBe('r2');
        expect(await o.waitForRun('s-bbbbbbbbbb', 'r2')).toMatchObject({ status: 'completed' });
        expect((await o.list()).map((s) => s.sessionId).sort()).toEqual(['s-aaaaaaaaaa', 's-bbbbbbbbbb']);
      },
    );
  });

  it('keeps request keys across restarts', async () => {
    const h = await harnesses({ fake: {} });
    const request = { adapter: 'fake', workspace: h.root, prompt: 'once', requestKey: 'durable' };
    const handle = await h.orchestrator.createSession(request);
    await h.orchestrator.waitForRun(handle.sessionId, handle.runId);
    await h.orchestrator.shutdown();
    const saved = JSON.parse(await readFile(join(h.deps.stateDir, REQUEST_KEYS_FILE), 'utf8')) as Record<string, { handle: unknown }>;
    expect(saved.durable?.handle).toEqual(handle);
    await withSecond(
      () => createOrchestrator(h.deps),
      async (o) => {
        expect(await o.createSession({ ...request })).toEqual(handle);
        await expect(o.createSession({ ...request, prompt: 'twice' })).rejects.toMatchObject({ code: 'request_key_conflict' });
      },
    );
    expect(await h.session.store.listSessions()).toHaveLength(1);
  });

  it('makes a request key durable (pending, with the turn ids) before the turn is recorded', async () => {
    const h = await harnesses({ fake: {} });
    const store = h.session.store;
    const writeSession = store.writeSession.bind(store);
    const keysAtFirstWrite: unknown[] = [];
    store.writeSession = async (record: SessionRecord) => {
      if (keysAtFirstWrite.length === 0)
        keysAtFirstWrite.push(JSON.parse(await readFile(join(h.deps.stateDir, REQUEST_KEYS_FILE), 'utf8').catch(() => '{}')));
      return writeSession(record);
    };
    const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'once', requestKey: 'early' });
    expect(keysAtFirstWrite).toEqual([{ early: { argsHash: expect.any(String), pending: { sessionId: handle.sessionId, runId: 'r1' } } }]);
    const saved = JSON.parse(await readFile(join(h.deps.stateDir, REQUEST_KEYS_FILE), 'utf8')) as Record<string, unknown>;
    expect(saved.early).toEqual({ argsHash: expect.any(String), handle });
  });

  it('settles pending request keys at start: a recorded turn completes to its handle, an unrecorded one is dropped', async () => {
    const h = await harnesses({ fake: {} });
    const request = { adapter: 'fake', workspace: h.root, prompt: 'once', autonomy: 'off' as const };
    const done = await h.orchestrator.createSession(request);
    await h.orchestrator.waitForRun(done.sessionId, done.runId);
    await h.orchestrator.shutdown();
    // What a crash right after the turn was recorded (k-done) or before (k-lost) leaves behind.
    const argsHash = hashRequestArgs(normalizeRequestArgs({ op: 'create', ...request }));
    await writeFile(
      join(h.deps.stateDir, REQUEST_KEYS_FILE),
      JSON.stringify({
        'k-done': { argsHash, pending: { sessionId: done.sessionId, runId: 'r1' } },
        'k-lost': { argsHash, pending: { sessionId: 's-0000000001', runId: 'r1' } },
      }),
    );
    await withSecond(
      () => createOrchestrator(h.deps),
      async (o) => {
        const saved = JSON.parse(await readFile(join(h.deps.stateDir, REQUEST_KEYS_FILE), 'utf8')) as Record<string, unknown>;
        expect(saved).toEqual({ 'k-done': { argsHash, handle: { ...done, state: 'running' } } });
        expect(await o.createSession({ ...request, requestKey: 'k-done' })).toEqual({ ...done, state: 'running' });
        expect(await h.session.store.listSessions()).toHaveLength(1);
        const retried = await o.createSession({ ...request, requestKey: 'k-lost' });
        expect(retried.sessionId).not.toBe(done.sessionId);
        await o.waitForRun(retried.sessionId, retried.runId);
      },
    );
  });

  it('refuses to start over a malformed request-key file, and refuses new turns once shut down', async () => {
    const h = await harnesses({ fake: {} });
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'x', requestKey: 'k' })).resolves.toMatchObject(
      { runId: 'r1' },
    );
    await h.orchestrator.shutdown();
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'late' })).rejects.toMatchObject({
      code: 'orchestrator_stopping',
    });
    await writeFile(join(h.deps.stateDir, REQUEST_KEYS_FILE), '[1, 2]');
    await expect(createOrchestrator(h.deps)).rejects.toMatchObject({ code: 'state_corrupt' });
    expect(await readFile(join(h.deps.stateDir, REQUEST_KEYS_FILE), 'utf8')).toBe('[1, 2]');
  });
});

describe('orchestrator: a fleet worker', () => {
  it("recovers only the sessions in its recovery scope (another worker's live turn is left alone)", async () => {
    const h = await harnesses({ fake: {} });
    await h.orchestrator.shutdown();
    const running = (): RunRecord => ({ id: 'r1', prompt: 'a', autonomy: 'low', status: 'running' });
    await h.session.store.writeSession(leftBehind('s-aaaaaaaaaa', h.root, [running()]));
    await h.session.store.writeSession(leftBehind('s-bbbbbbbbbb', h.root, [running()]));
    await withSecond(
      () => createOrchestrator({ ...h.deps, recoveryScope: ['s-aaaaaaaaaa', 's-cccccccccc'] }),
      async () => {
        expect((await h.session.store.readSession('s-aaaaaaaaaa')).runs[0]).toMatchObject({ status: 'unknown', reason: 'owner_died' });
        expect((await h.session.store.readSession('s-bbbbbbbbbb')).runs[0]).toMatchObject({ status: 'running' });
        expect((await h.session.store.readSession('s-bbbbbbbbbb')).status).toBe('working');
      },
    );
  });

  it('reads the records once at start: recovers a dead owner’s runs and reports the malformed records it skipped', async () => {
    const h = await harnesses({ fake: {} });
    await h.orchestrator.shutdown();
    await h.session.store.writeSession(
      leftBehind('s-aaaaaaaaaa', h.root, [
        { id: 'r1', prompt: 'a', autonomy: 'low', status: 'running' },
        { id: 'r2', prompt: 'b', autonomy: 'low', status: 'queued' },
      ]),
    );
    const bad = sessionDir(h.deps.stateDir, 's-bbbbbbbbbb');
    await mkdir(bad, { recursive: true });
    await writeFile(join(bad, 'session.json'), '{"id": "s-bbbbbbbbbb", ');
    // Every way of reading records, counted.
    const reads: string[] = [];
    const counted = new Proxy(h.deps.store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (name === 'scanSessions' || name === 'listSessions' || name === 'readSession') reads.push(String(name));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as Store;

    const start = startOrchestrator({ ...h.deps, store: counted });
    const orchestrator = await start.orchestrator;
    try {
      expect(await start.malformed).toEqual([
        { sessionId: 's-bbbbbbbbbb', file: join(bad, 'session.json'), reason: expect.stringMatching(/not valid JSON.*truncated/) },
      ]);
      expect(reads).toEqual(['scanSessions']);
      expect((await h.session.store.readSession('s-aaaaaaaaaa')).runs.map((r) => [r.status, r.reason])).toEqual([
        ['unknown', 'owner_died'],
        ['cancelled', 'queue_lost'],
      ]);
      // Left alone.
      expect(await readFile(join(bad, 'session.json'), 'utf8')).toBe('{"id": "s-bbbbbbbbbb", ');
    } finally {
      await orchestrator.shutdown();
    }
  });

  it('reports no malformed records when recovery fails, and the start rejects with its error', async () => {
    const h = await harnesses({ fake: {} });
    await h.orchestrator.shutdown();
    const unreadable = Object.assign(Object.create(h.deps.store) as Store, {
      scanSessions: () => Promise.reject(Object.assign(new Error('EIO: i/o error, scandir'), { code: 'EIO' })),
    });
    const start = startOrchestrator({ ...h.deps, store: unreadable });
    await expect(start.orchestrator).rejects.toMatchObject({ code: 'EIO' });
    expect(await start.malformed).toBeUndefined();
  });

  it('creates a session under the id its client assigned, and refuses a malformed or used one', async () => {
    const h = await harnesses({ fake: {} });
    const handle = await h.orchestrator.createSessionWithId({ adapter: 'fake', workspace: h.root, prompt: 'hi' }, 's-0123456789');
    expect(handle).toMatchObject({ sessionId: 's-0123456789', runId: 'r1' });
    expect(await h.orchestrator.waitForRun('s-0123456789', 'r1')).toMatchObject({ status: 'completed' });
    expect((await h.session.store.readSession('s-0123456789')).runs).toHaveLength(1);
    await expect(
      h.orchestrator.createSessionWithId({ adapter: 'fake', workspace: h.root, prompt: 'again' }, 's-0123456789'),
    ).rejects.toMatchObject({ code: 'usage', message: expect.stringContaining('exists already') });
    await expect(
      h.orchestrator.createSessionWithId({ adapter: 'fake', workspace: h.root, prompt: 'x' }, '../escape'),
    ).rejects.toMatchObject({ code: 'usage' });
    expect((await h.orchestrator.list()).map((s) => s.sessionId)).toEqual(['s-0123456789']);
  });
});
