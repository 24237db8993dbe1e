import { describe, expect, it } from 'vitest';
import type { SessionRecord } from '../../../core/store/index.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

describe('orchestrator: a turn whose queued record cannot be written', () => {
  it('is undone in memory: no queued run left behind, the next turn takes its run id and runs', async () => {
    const h = await harnesses({ fake: {} });
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    await h.orchestrator.waitForRun(first.sessionId, first.runId);

    const store = h.session.store;
    const writeSession = store.writeSession.bind(store);
    store.writeSession = () => Promise.reject(new Error('disk full'));
    await expect(h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'lost' })).rejects.toThrow('disk full');
    store.writeSession = writeSession;

    expect(await h.orchestrator.status(first.sessionId)).toMatchObject({
      state: 'idle',
      queueDepth: 0,
      latestRun: { runId: 'r1', status: 'completed' },
    });
    expect(h.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
    const next = await h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'two' });
    expect(next.runId).toBe('r2');
    expect(await h.orchestrator.waitForRun(first.sessionId, 'r2')).toMatchObject({ status: 'completed' });
    expect((await store.readSession(first.sessionId)).runs.map((run) => [run.id, run.prompt, run.status])).toEqual([
      ['r1', 'one', 'completed'],
      ['r2', 'two', 'completed'],
    ]);
  });

  it('leaves no session behind when a new session cannot be written', async () => {
    const h = await harnesses({ fake: {} });
    const store = h.session.store;
    const writeSession = store.writeSession.bind(store);
    store.writeSession = (record: SessionRecord) => Promise.reject(new Error(`cannot write ${record.id}`));
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'lost' })).rejects.toThrow('cannot write');
    store.writeSession = writeSession;
    expect(await h.orchestrator.list()).toEqual([]);
    expect(h.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
  });
});
