import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REQUEST_KEYS_FILE, startOrchestrator } from '../../../core/orchestrator/index.js';
import type { SessionRecord } from '../../../core/store/index.js';
import { type OrchestratorHarness, useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// `serve --auto --intent` starts its orchestrator with startOrchestrator: the intent's agent starts
// before recovery (every ms before the agent's spawn is on the path of the `run` that started the
// server). These run on the in-memory fake adapter, over a state directory a dead owner left.

async function harness(): Promise<{ h: OrchestratorHarness; logged: string[] }> {
  const logged: string[] = [];
  const h = await harnesses({
    fake: {},
    deps: { defaultsFor: () => ({ autonomy: 'low' }), defaultAdapter: 'fake', log: (message) => logged.push(message) },
  });
  // The harness's own orchestrator goes first: the next one starts over what it left, as after a crash.
  await h.orchestrator.shutdown();
  return { h, logged };
}

// A record as an owner that died mid-turn leaves it: one running run, one queued.
function leftBehind(workspace: string): SessionRecord {
  const at = '2026-01-01T00:00:00.000Z';
  return {
    id: 's-aaaaaaaaaa',
    adapter: 'fake',
    workspace,
    createdAt: at,
    updatedAt: at,
    status: 'working',
    runs: [
      { id: 'r1', prompt: 'a', autonomy: 'low', status: 'running' },
      { id: 'r2', prompt: 'b', autonomy: 'low', status: 'queued' },
    ],
  };
}

// Records, at each scan of the records (recovery's), how many fake agents had been opened: the
// order startOrchestrator keeps by itself (recovery waits for the intent's agent to spawn).
function openedAtScan(h: OrchestratorHarness): number[] {
  const store = h.session.store;
  const scanSessions = store.scanSessions.bind(store);
  const opened: number[] = [];
  store.scanSessions = async () => {
    opened.push(h.fake!.log.opened.length);
    return scanSessions();
  };
  return opened;
}

describe('startOrchestrator with an intent', () => {
  it("starts the intent's agent before recovery, which waits for its spawn; recovery still recovers the dead owner's session and leaves the agent alone", async () => {
    const { h, logged } = await harness();
    await h.session.store.writeSession(leftBehind(h.root));
    const opened = openedAtScan(h);

    const start = startOrchestrator(h.deps, { workspace: h.root });
    const orchestrator = await start.orchestrator;
    try {
      const { intentId } = (await start.intent)!;
      expect(opened).toEqual([1]);
      expect((await h.session.store.readSession('s-aaaaaaaaaa')).runs).toMatchObject([
        { id: 'r1', status: 'unknown', reason: 'owner_died' },
        { id: 'r2', status: 'cancelled', reason: 'queue_lost' },
      ]);
      // The intent's session: not touched by recovery, nothing stored, its agent still up.
      expect(intentId).toMatch(/^s-/);
      expect(await h.session.store.hasSession(intentId!)).toBe(false);
      expect(h.fake!.log.closed).toEqual([]);

      const handle = await orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' }, { intentId });
      expect(handle.sessionId).toBe(intentId);
      expect(await orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
      expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([intentId]);
      expect(logged).toContain(`intent: session ${intentId} takes the agent started for its intent`);
    } finally {
      await orchestrator.shutdown();
    }
  });

  it("discards the intent's agent when the start fails after it (a malformed request-key file): nothing of it remains", async () => {
    const { h } = await harness();
    await writeFile(join(h.deps.stateDir, REQUEST_KEYS_FILE), '[1, 2]');
    const opened = openedAtScan(h);

    const start = startOrchestrator(h.deps, { workspace: h.root });
    await expect(start.orchestrator).rejects.toMatchObject({ code: 'state_corrupt' });
    expect(opened).toEqual([1]);
    const { intentId } = (await start.intent)!;
    expect(intentId).toMatch(/^s-/);
    expect(h.fake!.log.closed).toEqual([intentId]);
    expect(h.fake!.log.open()).toBe(0);
    expect(existsSync(join(h.deps.stateDir, 'sessions', intentId!))).toBe(false);
    expect(await readdir(join(h.deps.stateDir, 'sessions'))).toEqual([]);
  });

  it("does not hold recovery past the head start when the intent's agent takes long to prepare (a CLI being installed)", async () => {
    let prepared!: () => void;
    const preparing = new Promise<void>((resolve) => {
      prepared = resolve;
    });
    const { h } = await harness();
    await h.session.store.writeSession(leftBehind(h.root));
    // The agent's runtime (its CLI prepared) comes only once `prepared()` is called.
    const runtimeFor: typeof h.deps.runtimeFor = async (...args) => {
      await preparing;
      return h.deps.runtimeFor(...args);
    };

    const start = startOrchestrator({ ...h.deps, runtimeFor, intentHeadStartMs: 50 }, { workspace: h.root });
    const orchestrator = await start.orchestrator;
    try {
      // Recovered while the agent still prepares: nothing of it opened yet.
      expect((await h.session.store.readSession('s-aaaaaaaaaa')).runs[0]).toMatchObject({ status: 'unknown', reason: 'owner_died' });
      expect(h.fake!.log.opened).toEqual([]);
      prepared();
      const { intentId } = (await start.intent)!;
      const handle = await orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' }, { intentId });
      expect(handle.sessionId).toBe(intentId);
      expect(await orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
      expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([intentId]);
    } finally {
      prepared();
      await orchestrator.shutdown();
    }
  });

  it('starts no agent for an intent outside the approved roots, and the orchestrator starts as without one', async () => {
    const { h } = await harness();
    const start = startOrchestrator(h.deps, { workspace: join(h.root, '..') });
    const orchestrator = await start.orchestrator;
    try {
      const started = await start.intent;
      expect(started?.intentId).toBeUndefined();
      expect(started?.reason).toMatch(/approved/);
      expect(h.fake!.log.opened).toEqual([]);
      const handle = await orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
      expect(await orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    } finally {
      await orchestrator.shutdown();
    }
  });
});
