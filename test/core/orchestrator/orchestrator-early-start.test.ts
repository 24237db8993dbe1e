import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../core/catalog/index.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import type { FakeAdapterOptions } from '../../support/fake-adapter.js';
import { type OrchestratorHarness, useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// createSession starts the session's agent while it checks the catalog and records the turn
// (an early start), on the in-memory fake adapter, whose log says which agents were opened,
// started, prompted and closed. The catalog here answers only when the test says so.

const CATALOG: CatalogModel[] = [
  { id: 'big', displayName: 'big', custom: false, deprecated: false, disabled: false, efforts: ['low', 'high'], defaultEffort: 'low' },
];

// A harness whose catalog listing waits for `answer()`; `fake` options as given.
async function withSlowCatalog(
  options: { fake?: FakeAdapterOptions; maxConcurrentRuns?: number } = {},
): Promise<{ h: OrchestratorHarness; answer: () => void; asked: () => number }> {
  const waiting: Array<() => void> = [];
  let asked = 0;
  const h = await harnesses({
    fake: options.fake ?? {},
    limits: options.maxConcurrentRuns ? { maxConcurrentRuns: options.maxConcurrentRuns } : {},
    deps: {
      defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
      modelsFor: () => {
        asked += 1;
        return new Promise((resolve) => waiting.push(() => resolve(CATALOG)));
      },
    },
  });
  const answer = (): void => {
    for (const resolve of waiting.splice(0)) resolve();
  };
  return { h, answer, asked: () => asked };
}

// The agents started ahead of their session's acceptance that are up now (the pool lists them).
function startedAhead(h: OrchestratorHarness): Array<{ sessionId: string; pid: number | undefined }> {
  return h.orchestrator.prewarmedAgents().filter((agent) => agent.pid !== undefined);
}

function ofType(events: RuntimeEvent[], type: RuntimeEvent['type']): RuntimeEvent[] {
  return events.filter((event) => event.type === type);
}

describe('orchestrator: the agent starts while a new session is checked (early start)', () => {
  it('starts the agent before the catalog answers, and the first turn runs in it: one agent, one handshake', async () => {
    const { h, answer, asked } = await withSlowCatalog();
    const created = h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    await h.until(() => asked() === 1 && startedAhead(h).length === 1);
    const [agent] = startedAhead(h);
    const fake = h.fake!.log;
    // Up and negotiated while acceptance still waits for the catalog; nothing is stored yet.
    expect(fake.opened.map((spec) => spec.sessionId)).toEqual([agent!.sessionId]);
    expect(fake.prompts).toEqual([]);
    expect(await h.session.store.listSessions()).toEqual([]);

    answer();
    const handle = await created;
    expect(handle.sessionId).toBe(agent!.sessionId);
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(fake.opened).toHaveLength(1);
    expect(fake.prompts.map((p) => [p.sessionId, p.input.text])).toEqual([[handle.sessionId, 'hello']]);
    const logged = await h.session.logged(handle.sessionId);
    expect(logged[0]).toMatchObject({ type: 'turn.queued', seq: 1 });
    expect(ofType(logged, 'session.started')).toHaveLength(1);
    expect(ofType(logged, 'turn.completed')).toHaveLength(1);
    expect(logged.map((event) => event.seq)).toEqual(logged.map((_, index) => index + 1));
    const record = await h.session.store.readSession(handle.sessionId);
    expect(record).toMatchObject({ nativeSessionId: `fake-${handle.sessionId}`, cliVersion: '1.0.0' });
    expect(record.runs.map((run) => [run.id, run.status, run.model])).toEqual([['r1', 'completed', 'big']]);
    expect(h.orchestrator.prewarmedAgents()).toEqual([]);
  });

  it('stops the agent when the catalog then refuses the model, and nothing of the session remains', async () => {
    const { h, answer, asked } = await withSlowCatalog();
    const created = h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello', model: 'nope' });
    await h.until(() => asked() === 1 && startedAhead(h).length === 1);
    const [agent] = startedAhead(h);
    expect(existsSync(join(h.deps.stateDir, 'sessions', agent!.sessionId, 'home'))).toBe(true);

    answer();
    await expect(created).rejects.toMatchObject({ code: 'model_unavailable' });
    // Stopped before the refusal was answered: its session directory (HOME) is gone, no session is listed.
    expect(h.fake!.log.closed).toEqual([agent!.sessionId]);
    expect(h.fake!.log.open()).toBe(0);
    expect(h.fake!.log.prompts).toEqual([]);
    expect(existsSync(join(h.deps.stateDir, 'sessions', agent!.sessionId))).toBe(false);
    expect(await h.orchestrator.list()).toEqual([]);
    expect(h.orchestrator.prewarmedAgents()).toEqual([]);
    expect(h.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
  });

  it('starts no agent for a session whose turn would wait for a free slot', async () => {
    const { h, answer, asked } = await withSlowCatalog({
      fake: { script: (input) => (input.text === 'long' ? { hang: true } : {}) },
      maxConcurrentRuns: 1,
    });
    const firstCreate = h.orchestrator.createSession({ adapter: 'fake', workspace: await h.dir('a'), prompt: 'long' });
    await h.until(() => asked() === 1 && startedAhead(h).length === 1);
    answer();
    const first = await firstCreate;
    await h.running(first.sessionId, first.runId);

    const secondCreate = h.orchestrator.createSession({ adapter: 'fake', workspace: await h.dir('b'), prompt: 'second' });
    // Its catalog check is pending; the one slot is taken: no agent is started for it meanwhile.
    await h.until(() => asked() === 2);
    expect(h.fake!.log.opened).toHaveLength(1);
    expect(h.orchestrator.prewarmedAgents()).toEqual([]);
    answer();
    const second = await secondCreate;
    expect(second.state).toBe('queued');
    expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([first.sessionId]);
    await h.orchestrator.cancel(first.sessionId);
    expect(await h.orchestrator.waitForRun(second.sessionId, second.runId)).toMatchObject({ status: 'completed' });
    expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([first.sessionId, second.sessionId]);
  });

  it('gives the turn a new agent, with a warn, when the agent started ahead did not come up', async () => {
    const { h, answer, asked } = await withSlowCatalog({ fake: { failStart: 'no luck' } });
    const created = h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    await h.until(() => asked() === 1 && h.fake!.log.opened.length === 1);
    answer();
    const handle = await created;
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([handle.sessionId, handle.sessionId]);
    expect(h.fake!.log.prompts).toHaveLength(1);
    const logged = await h.session.logged(handle.sessionId);
    expect(ofType(logged, 'log')).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        message: 'the agent started ahead of this turn did not come up; starting it again for the turn',
      }),
    );
    expect(ofType(logged, 'turn.completed')).toMatchObject([{ outcome: { status: 'completed' } }]);
  });
});
