import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { type OrchestratorHarness, useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// Warm agents are core's (the orchestrator's); they run on the in-memory fake adapter, whose log
// says which agents were opened (with the native id they resume), prompted and closed.

// A window no test outlasts: only the limits, an explicit drain or shutdown close these agents.
const LONG_MS = 600_000;

// Runs one turn in a new session (own workspace) and waits for its outcome.
async function newSession(h: OrchestratorHarness, name: string): Promise<string> {
  const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: await h.dir(name), prompt: `hello ${name}` });
  expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
  return handle.sessionId;
}

async function send(h: OrchestratorHarness, sessionId: string, prompt: string): Promise<void> {
  const handle = await h.orchestrator.sendMessage({ sessionId, prompt });
  expect(await h.orchestrator.waitForRun(sessionId, handle.runId)).toMatchObject({ status: 'completed' });
}

async function closes(h: OrchestratorHarness, sessionId: string): Promise<RuntimeEvent[]> {
  return (await h.session.logged(sessionId)).filter((event) => event.type === 'session.closed');
}

// Waits until the session's log holds a session.closed and returns its reasons.
async function closedReasons(h: OrchestratorHarness, sessionId: string): Promise<string[]> {
  await h.until(async () => (await closes(h, sessionId)).length > 0);
  return (await closes(h, sessionId)).map((event) => (event.type === 'session.closed' ? event.reason : ''));
}

describe('warm agents', () => {
  it('gives the next turn within the window to the same agent: no second spawn, no load', async () => {
    const h = await harnesses({ fake: {}, limits: { keepWarmMs: LONG_MS } });
    const id = await newSession(h, 'a');
    expect(h.orchestrator.warmSessions()).toEqual([id]);
    await send(h, id, 'again');
    await send(h, id, 'and again');
    const log = h.fake!.log;
    expect(log.opened).toHaveLength(1);
    expect(log.open()).toBe(1);
    // One new native session, never resumed; three prompts to that one agent.
    expect(log.opened[0]!.nativeSessionId).toBeUndefined();
    expect(log.opened.filter((spec) => spec.nativeSessionId !== undefined)).toHaveLength(0);
    expect(log.prompts.map((p) => p.input.text)).toEqual(['hello a', 'again', 'and again']);
    expect(await closes(h, id)).toEqual([]);
    const record = await h.session.store.readSession(id);
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([
      ['r1', 'completed'],
      ['r2', 'completed'],
      ['r3', 'completed'],
    ]);
  });

  it('asks the warm agent whether it answers while the next turn is recorded, once, and gives it the turn', async () => {
    const h = await harnesses({ fake: {}, limits: { keepWarmMs: LONG_MS } });
    const id = await newSession(h, 'a');
    const log = h.fake!.log;
    const asked = log.readies;
    // The follow-up's queued record write is held until the test releases it.
    const store = h.session.store;
    const write = store.writeSession.bind(store);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = false;
    store.writeSession = async (record) => {
      if (!held && record.runs.some((run) => run.id === 'r2')) {
        held = true;
        await gate;
      }
      return write(record);
    };
    const sent = h.orchestrator.sendMessage({ sessionId: id, prompt: 'again' });
    await h.until(() => held);
    await h.until(() => log.readies === asked + 1);
    expect(log.prompts).toHaveLength(1);
    release();
    const handle = await sent;
    expect(await h.orchestrator.waitForRun(id, handle.runId)).toMatchObject({ status: 'completed' });
    expect(log.readies).toBe(asked + 1);
    expect(log.opened).toHaveLength(1);
    expect(log.prompts.map((p) => p.input.text)).toEqual(['hello a', 'again']);
  });

  it('closes an agent that stays idle for keepWarmMs, recorded as idle', async () => {
    const h = await harnesses({ fake: {}, limits: { keepWarmMs: 300 } });
    const id = await newSession(h, 'a');
    expect(await closedReasons(h, id)).toEqual(['idle']);
    const log = h.fake!.log;
    expect(log.closed).toEqual([id]);
    expect(log.open()).toBe(0);
    expect(h.orchestrator.warmSessions()).toEqual([]);
    // The next turn starts a new agent that resumes the native session.
    await send(h, id, 'later');
    expect(log.opened).toHaveLength(2);
    const native = (await h.session.store.readSession(id)).nativeSessionId;
    expect(log.opened.map((spec) => spec.nativeSessionId)).toEqual([undefined, native]);
  });

  it('closes the least recently used agent when maxWarmAgents is reached', async () => {
    const h = await harnesses({ fake: {}, limits: { keepWarmMs: LONG_MS, maxWarmAgents: 2 } });
    const a = await newSession(h, 'a');
    const b = await newSession(h, 'b');
    await send(h, a, 'a is used again, b is now the least recently used');
    const c = await newSession(h, 'c');
    expect(await closedReasons(h, b)).toEqual(['evicted']);
    expect(h.orchestrator.warmSessions()).toEqual([a, c]);
    expect(await closes(h, a)).toEqual([]);
    expect(await closes(h, c)).toEqual([]);
    // a's agent and c's live on; b's is closed.
    expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([a, b, c]);
    expect(h.fake!.log.closed).toEqual([b]);
    expect(h.fake!.log.open()).toBe(2);
  });

  it('keeps the warm agents within the memory budget, least recently used first', async () => {
    const MB = 2 ** 20;
    const h = await harnesses({
      fake: {},
      limits: { keepWarmMs: LONG_MS, maxWarmMemoryBytes: 250 * MB },
      deps: { measureRss: async () => 100 * MB },
    });
    const a = await newSession(h, 'a');
    const b = await newSession(h, 'b');
    expect(h.orchestrator.warmSessions()).toEqual([a, b]);
    const c = await newSession(h, 'c');
    expect(await closedReasons(h, a)).toEqual(['memory_budget']);
    expect(h.orchestrator.warmSessions()).toEqual([b, c]);
  });

  it('replaces a warm agent that was killed from outside before giving it the next turn, which completes', async () => {
    const h = await harnesses({ fake: {}, limits: { keepWarmMs: LONG_MS } });
    const id = await newSession(h, 'a');
    h.fake!.crash(id);
    await send(h, id, 'after the kill');
    const log = h.fake!.log;
    expect(log.opened).toHaveLength(2);
    expect(log.open()).toBe(1);
    expect(log.prompts.map((p) => p.input.text)).toEqual(['hello a', 'after the kill']);
    const logged = await h.session.logged(id);
    const closed = logged.find((event) => event.type === 'session.closed');
    const restarted = logged.filter((event) => event.type === 'session.started');
    expect(closed).toMatchObject({ reason: 'agent_gone' });
    expect(restarted).toHaveLength(2);
    // Recorded gone before the replacement started and before the turn reached it.
    expect(closed!.seq).toBeLessThan(restarted[1]!.seq);
    const native = (await h.session.store.readSession(id)).nativeSessionId;
    expect(log.opened.map((spec) => spec.nativeSessionId)).toEqual([undefined, native]);
    expect(logged.filter((event) => event.type === 'error')).toEqual([]);
  });

  it('drains every warm agent on a config change, each close recorded', async () => {
    const h = await harnesses({ fake: {}, limits: { keepWarmMs: LONG_MS } });
    const a = await newSession(h, 'a');
    const b = await newSession(h, 'b');
    await h.orchestrator.drainWarmAgents('config_changed');
    expect(h.orchestrator.warmSessions()).toEqual([]);
    expect(await closes(h, a)).toMatchObject([{ reason: 'config_changed' }]);
    expect(await closes(h, b)).toMatchObject([{ reason: 'config_changed' }]);
    expect(h.fake!.log.closed.toSorted()).toEqual([a, b].toSorted());
    expect(h.fake!.log.open()).toBe(0);
  });

  it('closes every warm agent on shutdown and leaves no child behind', async () => {
    const h = await harnesses({ fake: {}, limits: { keepWarmMs: LONG_MS } });
    const a = await newSession(h, 'a');
    const b = await newSession(h, 'b');
    expect(h.fake!.log.open()).toBe(2);
    await h.orchestrator.shutdown();
    // Resolved only once the agents are closed: nothing to wait for.
    expect(h.fake!.log.open()).toBe(0);
    expect(h.fake!.log.closed.toSorted()).toEqual([a, b].toSorted());
    expect(await closes(h, a)).toMatchObject([{ reason: 'shutdown' }]);
    expect(await closes(h, b)).toMatchObject([{ reason: 'shutdown' }]);
    // dispose (shutdown again) is idempotent.
    await h.dispose();
  });
});
