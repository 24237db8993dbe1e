import { describe, expect, it } from 'vitest';
import { probe } from '../../support/session-harness.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// The one cancel case that needs a real agent process: a child that ignores the interrupt and
// SIGTERM must be killed (SIGKILL) before its slot is given away. The in-memory fake adapter has
// no process to kill, so this runs on the fake droid binary (test/peers).
describe('orchestrator: cancel of a child that will not stop', () => {
  it('cancel kills a child that ignores the interrupt after the grace, frees the slot, and leaves other sessions alone', async () => {
    const h = await harnesses({ stepMs: 60_000, faults: ['ignore-sigterm', 'silence'], limits: { maxConcurrentRuns: 2 } });
    const a = (await h.orchestrator.createSession({ adapter: 'droid', workspace: await h.dir('a'), prompt: 'a' })).sessionId;
    const b = (await h.orchestrator.createSession({ adapter: 'droid', workspace: await h.dir('b'), prompt: 'b' })).sessionId;
    const c = await h.orchestrator.createSession({ adapter: 'droid', workspace: await h.dir('c'), prompt: 'c' });
    for (const id of [a, b, c.sessionId]) h.watch(id);
    const queuedOfA = await h.orchestrator.sendMessage({ sessionId: a, prompt: 'a2' });
    expect(h.orchestrator.activity()).toEqual({ live: 2, queued: 2 });
    await h.running(a, 'r1');
    await h.running(b, 'r1');

    const summary = await h.orchestrator.cancel(a);
    expect(summary).toMatchObject({ sessionId: a, state: 'idle', queueDepth: 0 });
    expect(await h.orchestrator.waitForRun(a, 'r1')).toMatchObject({ status: 'interrupted', runStatus: 'interrupted' });
    expect(await h.orchestrator.waitForRun(a, queuedOfA.runId)).toMatchObject({ runStatus: 'cancelled', reason: 'cancelled' });
    // a's child (which ignored the interrupt and SIGTERM) was killed before its slot went to c; b's lives on.
    const gone = h.session.children.filter((child) => probe(child.pid!) === 'ESRCH');
    expect(gone).toHaveLength(1);
    expect(await gone[0]!.exited).toMatchObject({ signal: 'SIGKILL' });
    await h.running(c.sessionId, 'r1');
    expect((await h.orchestrator.status(b)).state).toBe('working');
    expect(h.orchestrator.activity()).toEqual({ live: 2, queued: 0 });
  });
});
