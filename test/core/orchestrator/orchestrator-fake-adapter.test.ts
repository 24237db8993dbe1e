import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrchestrator, type Orchestrator } from '../../../core/orchestrator/index.js';
import { createFakeAdapter, createFakeRuntime, type FakeAdapterOptions, type FakeAgent } from '../../support/fake-adapter.js';
import { TEST_LIMITS } from './orchestrator-harness.js';

// The orchestrator over the in-memory fake adapter: admission, steering and per-turn settings
// decided from what the adapter declares, with no agent process and no droid.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(options: FakeAdapterOptions = {}): Promise<{ orchestrator: Orchestrator; fake: FakeAgent; root: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ow-fake-orch-'));
  const fake = createFakeAdapter(options);
  const runtime = await createFakeRuntime(fake, join(root, 'state'));
  const orchestrator = await createOrchestrator({
    store: runtime.store,
    stateDir: runtime.stateDir,
    limits: { ...TEST_LIMITS, keepWarmMs: 60_000 },
    approvedRoots: [root],
    defaultsFor: (adapter) => {
      if (adapter !== 'fake') throw new Error(`unknown adapter ${adapter}`);
      return { autonomy: 'low' };
    },
    runtimeFor: () => Promise.resolve(runtime),
  });
  cleanups.push(async () => {
    await orchestrator.shutdown();
    await rm(root, { recursive: true, force: true });
  });
  return { orchestrator, fake, root };
}

describe('orchestrator on the fake adapter', () => {
  it('runs a session to completion and gives the next turn to the same warm agent', async () => {
    const { orchestrator, fake, root } = await start();
    const created = await orchestrator.createSession({ adapter: 'fake', workspace: root, prompt: 'one' });
    expect(await orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed', text: 'reply to one' });
    const second = await orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two' });
    expect(await orchestrator.waitForRun(created.sessionId, second.runId)).toMatchObject({ status: 'completed', text: 'reply to two' });
    expect(fake.log.prompts.map((p) => p.input.text)).toEqual(['one', 'two']);
    expect(fake.log.opened).toHaveLength(1);
  });

  it('steers: interrupt drops the live turn and runs the new prompt', async () => {
    const { orchestrator, fake, root } = await start({ script: (input) => (input.text === 'long' ? { hang: true } : {}) });
    const created = await orchestrator.createSession({ adapter: 'fake', workspace: root, prompt: 'long' });
    while (fake.log.prompts.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const steer = await orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'instead', interrupt: true });
    expect(await orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'interrupted' });
    expect(await orchestrator.waitForRun(created.sessionId, steer.runId)).toMatchObject({ status: 'completed', text: 'reply to instead' });
    expect(fake.log.interrupts).toBeGreaterThanOrEqual(1);
  });

  it('restarts the agent for other settings only when the adapter cannot apply them', async () => {
    for (const perTurnSettings of [false, true]) {
      const { orchestrator, fake, root } = await start({ perTurnSettings });
      const created = await orchestrator.createSession({ adapter: 'fake', workspace: root, prompt: 'one', model: 'm1' });
      await orchestrator.waitForRun(created.sessionId, created.runId);
      const next = await orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two', model: 'm2' });
      await orchestrator.waitForRun(created.sessionId, next.runId);
      expect(fake.log.prompts.at(-1)?.input.settings).toMatchObject({ model: 'm2' });
      expect(fake.log.opened.length, `perTurnSettings ${perTurnSettings}`).toBe(perTurnSettings ? 1 : 2);
    }
  });
});
