import { describe, expect, it } from 'vitest';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// Core behaviour (queueing, FIFO, request keys, idle close) on the in-memory fake adapter.

describe('orchestrator: turns of one session', () => {
  it('records a turn as queued before it runs, runs it, and closes the idle child', async () => {
    const h = await harnesses({ fake: {} });
    const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello', title: 't', labels: ['x'] });
    expect(handle).toMatchObject({ runId: 'r1' });
    const outcome = await h.orchestrator.waitForRun(handle.sessionId, handle.runId);
    expect(outcome).toMatchObject({ status: 'completed', runStatus: 'completed', text: 'reply to hello' });

    // The idle child is closed by the orchestrator after the run settled, without holding up the caller.
    await h.until(async () => (await h.session.logged(handle.sessionId)).some((event) => event.type === 'session.closed'));
    const logged = await h.session.logged(handle.sessionId);
    const types = logged.map((event) => event.type);
    expect(types.indexOf('turn.queued')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('turn.queued')).toBeLessThan(types.indexOf('turn.started'));
    expect(logged.map((event) => event.seq)).toEqual(logged.map((_, index) => index + 1));
    expect(types.at(-1)).toBe('session.closed');

    const record = await h.session.store.readSession(handle.sessionId);
    expect(record.runs).toHaveLength(1);
    expect(record.runs[0]).toMatchObject({ id: 'r1', status: 'completed', prompt: 'hello' });
    expect(await h.orchestrator.status(handle.sessionId)).toMatchObject({
      state: 'idle',
      queueDepth: 0,
      labels: ['x'],
      title: 't',
      latestRun: { runId: 'r1', status: 'completed' },
    });
    // The session went idle: its agent was stopped.
    expect(h.fake!.log.opened).toHaveLength(1);
    await h.until(() => h.fake!.log.open() === 0);
    expect(h.fake!.log.closes).toBe(1);
  });

  it('runs queued turns of a session in order on one child, also when a later turn changes the autonomy', async () => {
    // An agent that applies settings per turn (as droid does with update_session_settings).
    const h = await harnesses({ fake: { perTurnSettings: true } });
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    const second = await h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'two' });
    const third = await h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'three', autonomy: 'off' });
    expect([second.state, third.state]).toEqual(['queued', 'queued']);
    expect((await h.orchestrator.status(first.sessionId)).queueDepth).toBe(2);
    const waited = await h.orchestrator.wait([first.sessionId], 60_000);
    expect(waited).toMatchObject({ timedOut: false, pending: [] });
    const record = await h.session.store.readSession(first.sessionId);
    expect(record.runs.map((run) => [run.id, run.prompt, run.status, run.autonomy])).toEqual([
      ['r1', 'one', 'completed', 'low'],
      ['r2', 'two', 'completed', 'low'],
      ['r3', 'three', 'completed', 'off'],
    ]);
    // r2 reused r1's agent; r3 changed the autonomy, which the running agent took with the turn:
    // still one agent, one new native session, no resume; the turns reached it in order.
    expect(h.fake!.log.opened).toHaveLength(1);
    expect(h.fake!.log.opened[0]!.nativeSessionId).toBeUndefined();
    expect(h.fake!.log.prompts.map((p) => [p.input.text, p.input.settings?.autonomy])).toEqual([
      ['one', 'low'],
      ['two', 'low'],
      ['three', 'off'],
    ]);
  });

  it('refuses a workspace outside the approved roots and an unknown session, recording nothing', async () => {
    const h = await harnesses({ fake: {} });
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: '/', prompt: 'x' })).rejects.toMatchObject({
      code: 'workspace_not_approved',
    });
    await expect(h.orchestrator.sendMessage({ sessionId: 's-0000000000', prompt: 'x' })).rejects.toMatchObject({
      code: 'session_not_found',
    });
    expect(await h.session.store.listSessions()).toEqual([]);
  });

  it('returns the same handle for a repeated request key and refuses other arguments', async () => {
    const h = await harnesses({ fake: {} });
    const request = { adapter: 'fake', workspace: h.root, prompt: 'once', requestKey: 'k-1' };
    const first = await h.orchestrator.createSession(request);
    const again = await h.orchestrator.createSession({ ...request });
    expect(again).toEqual(first);
    await expect(h.orchestrator.createSession({ ...request, prompt: 'other' })).rejects.toMatchObject({ code: 'request_key_conflict' });
    const send = { sessionId: first.sessionId, prompt: 'next', requestKey: 'k-2' };
    const sent = await h.orchestrator.sendMessage(send);
    expect(await h.orchestrator.sendMessage(send)).toEqual(sent);
    await h.orchestrator.wait([first.sessionId], 60_000);
    expect((await h.session.store.listSessions()).map((record) => record.runs.length)).toEqual([2]);
  });

  it('treats interrupt: false and labels: [] like omitted members when checking a request key', async () => {
    const h = await harnesses({ fake: {} });
    const create = { adapter: 'fake', workspace: h.root, prompt: 'once', requestKey: 'c-1' };
    const first = await h.orchestrator.createSession({ ...create, labels: [] });
    expect(await h.orchestrator.createSession(create)).toEqual(first);
    const send = { sessionId: first.sessionId, prompt: 'next', requestKey: 's-1' };
    const sent = await h.orchestrator.sendMessage({ ...send, interrupt: false });
    expect(await h.orchestrator.sendMessage(send)).toEqual(sent);
    // A real difference still conflicts.
    await expect(h.orchestrator.sendMessage({ ...send, interrupt: true })).rejects.toMatchObject({ code: 'request_key_conflict' });
    await h.orchestrator.wait([first.sessionId], 60_000);
    expect((await h.session.store.readSession(first.sessionId)).runs.map((run) => run.id)).toEqual(['r1', 'r2']);
  });
});
