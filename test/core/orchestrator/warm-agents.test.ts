import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { probe } from '../../support/session-harness.js';
import { type OrchestratorHarness, useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// A window no test outlasts: only the limits, an explicit drain or shutdown close these agents.
const LONG_MS = 600_000;

// Runs one turn in a new session (own workspace) and waits for its outcome.
async function newSession(h: OrchestratorHarness, name: string): Promise<string> {
  const handle = await h.orchestrator.createSession({ adapter: 'droid', workspace: await h.dir(name), prompt: `hello ${name}` });
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
    const h = await harnesses({ limits: { keepWarmMs: LONG_MS } });
    const id = await newSession(h, 'a');
    expect(h.orchestrator.warmSessions()).toEqual([id]);
    await send(h, id, 'again');
    await send(h, id, 'and again');
    expect(h.session.children).toHaveLength(1);
    expect(probe(h.session.pid())).toBeUndefined();
    const methods = await h.session.receivedMethods();
    expect(methods.filter((m) => m === 'droid.initialize_session')).toHaveLength(1);
    expect(methods.filter((m) => m === 'droid.load_session')).toHaveLength(0);
    expect(methods.filter((m) => m === 'droid.add_user_message')).toHaveLength(3);
    expect(await closes(h, id)).toEqual([]);
    const record = await h.session.store.readSession(id);
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([
      ['r1', 'completed'],
      ['r2', 'completed'],
      ['r3', 'completed'],
    ]);
  });

  it('closes an agent that stays idle for keepWarmMs, recorded as idle', async () => {
    const h = await harnesses({ limits: { keepWarmMs: 300 } });
    const id = await newSession(h, 'a');
    expect(await closedReasons(h, id)).toEqual(['idle']);
    await h.session.children[0]!.exited;
    expect(probe(h.session.pid())).toBe('ESRCH');
    expect(h.orchestrator.warmSessions()).toEqual([]);
    // The next turn starts a new agent that loads the native session.
    await send(h, id, 'later');
    expect(h.session.children).toHaveLength(2);
    expect((await h.session.receivedMethods()).filter((m) => m === 'droid.load_session')).toHaveLength(1);
  });

  it('closes the least recently used agent when maxWarmAgents is reached', async () => {
    const h = await harnesses({ limits: { keepWarmMs: LONG_MS, maxWarmAgents: 2 } });
    const a = await newSession(h, 'a');
    const b = await newSession(h, 'b');
    await send(h, a, 'a is used again, b is now the least recently used');
    const c = await newSession(h, 'c');
    expect(await closedReasons(h, b)).toEqual(['evicted']);
    expect(h.orchestrator.warmSessions()).toEqual([a, c]);
    expect(await closes(h, a)).toEqual([]);
    expect(await closes(h, c)).toEqual([]);
    // a's child (index 0) and c's (index 2) live on; b's (index 1) is gone.
    await h.session.children[1]!.exited;
    expect([0, 1, 2].map((i) => probe(h.session.pid(i)))).toEqual([undefined, 'ESRCH', undefined]);
  });

  it('keeps the warm agents within the memory budget, least recently used first', async () => {
    const MB = 2 ** 20;
    const h = await harnesses({
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
    const h = await harnesses({ limits: { keepWarmMs: LONG_MS } });
    const id = await newSession(h, 'a');
    const first = h.session.children[0]!;
    process.kill(first.pid!, 'SIGKILL');
    await send(h, id, 'after the kill');
    expect(h.session.children).toHaveLength(2);
    expect(probe(h.session.pid(1))).toBeUndefined();
    const logged = await h.session.logged(id);
    const closed = logged.find((event) => event.type === 'session.closed');
    const restarted = logged.filter((event) => event.type === 'session.started');
    expect(closed).toMatchObject({ reason: 'agent_gone' });
    expect(restarted).toHaveLength(2);
    // Recorded gone before the replacement started and before the turn reached it.
    expect(closed!.seq).toBeLessThan(restarted[1]!.seq);
    expect((await h.session.receivedMethods()).filter((m) => m === 'droid.load_session')).toHaveLength(1);
    expect(logged.filter((event) => event.type === 'error')).toEqual([]);
  });

  it('drains every warm agent on a config change, each close recorded', async () => {
    const h = await harnesses({ limits: { keepWarmMs: LONG_MS } });
    const a = await newSession(h, 'a');
    const b = await newSession(h, 'b');
    await h.orchestrator.drainWarmAgents('config_changed');
    expect(h.orchestrator.warmSessions()).toEqual([]);
    expect(await closes(h, a)).toMatchObject([{ reason: 'config_changed' }]);
    expect(await closes(h, b)).toMatchObject([{ reason: 'config_changed' }]);
    for (const child of h.session.children) expect(probe(child.pid!)).toBe('ESRCH');
  });

  it('closes every warm agent on shutdown and leaves no child behind', async () => {
    const h = await harnesses({ limits: { keepWarmMs: LONG_MS } });
    const a = await newSession(h, 'a');
    const b = await newSession(h, 'b');
    expect(h.session.children.map((child) => probe(child.pid!))).toEqual([undefined, undefined]);
    await h.orchestrator.shutdown();
    // Resolved only once the children are gone: nothing to wait for.
    expect(h.session.children.map((child) => probe(child.pid!))).toEqual(['ESRCH', 'ESRCH']);
    expect(await closes(h, a)).toMatchObject([{ reason: 'shutdown' }]);
    expect(await closes(h, b)).toMatchObject([{ reason: 'shutdown' }]);
    // dispose (shutdown again, idempotent) also checks that their process groups are gone.
    await h.dispose();
  });
});
