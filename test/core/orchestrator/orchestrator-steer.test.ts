import { describe, expect, it } from 'vitest';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// Steering with an agent that can be steered (capability `steering`, AdapterSession.steer):
// `sendMessage({ interrupt: true })` with the live turn's settings gives the message to the live
// turn; otherwise (other settings, an agent that refuses, none that can steer) the live turn is
// interrupted and the message runs as a turn of its own.

describe('orchestrator: steering a live turn', () => {
  it('gives the message to the live turn of an agent that can be steered, supersedes the queued ones, interrupts nothing', async () => {
    const h = await harnesses({ fake: { steering: true, script: () => ({ hang: true }) } });
    const workspace = await h.dir('steer');
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace, prompt: 'long job' });
    h.watch(first.sessionId);
    await h.running(first.sessionId, first.runId);
    const queued = await h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'queued job' });
    expect(queued.state).toBe('queued');
    const steered = await h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'change of plan', interrupt: true });
    expect(steered).toMatchObject({ sessionId: first.sessionId, runId: first.runId, state: 'running' });
    await h.orchestrator.wait([first.sessionId], 60_000);
    const [record] = await h.session.store.listSessions();
    expect(record!.runs.map((run) => [run.id, run.status, run.reason, run.text])).toEqual([
      [first.runId, 'completed', 'completed', 'steered by change of plan'],
      [queued.runId, 'cancelled', 'superseded', undefined],
    ]);
    expect(h.fake!.log.steers).toEqual(['change of plan']);
    expect(h.fake!.log.interrupts).toBe(0);
    expect(h.events.filter((e) => e.type === 'log' && e.level === 'info' && e.message.startsWith('steered run'))).toEqual([
      expect.objectContaining({ message: `steered run ${first.runId}: change of plan` }),
    ]);
  });

  it('interrupts and runs the message as its own turn when its settings differ from the live turn', async () => {
    const h = await harnesses({ fake: { steering: true, perTurnSettings: true, script: (_input, n) => (n === 0 ? { hang: true } : {}) } });
    const workspace = await h.dir('steer-settings');
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace, prompt: 'long job' });
    await h.running(first.sessionId, first.runId);
    const next = await h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'other plan', interrupt: true, autonomy: 'high' });
    expect(next.runId).not.toBe(first.runId);
    await h.orchestrator.wait([first.sessionId], 60_000);
    const [record] = await h.session.store.listSessions();
    expect(record!.runs.map((run) => [run.id, run.status])).toEqual([
      [first.runId, 'interrupted'],
      [next.runId, 'completed'],
    ]);
    expect(h.fake!.log.steers).toEqual([]);
    expect(h.fake!.log.interrupts).toBe(1);
  });

  it('interrupts as before when no turn is live to take the message', async () => {
    const h = await harnesses({ fake: { steering: true } });
    const workspace = await h.dir('steer-idle');
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace, prompt: 'short job' });
    await h.orchestrator.wait([first.sessionId], 60_000);
    const next = await h.orchestrator.sendMessage({ sessionId: first.sessionId, prompt: 'next', interrupt: true });
    expect(next.runId).not.toBe(first.runId);
    await h.orchestrator.wait([first.sessionId], 60_000);
    const [record] = await h.session.store.listSessions();
    expect(record!.runs.map((run) => [run.id, run.status])).toEqual([
      [first.runId, 'completed'],
      [next.runId, 'completed'],
    ]);
    expect(h.fake!.log.steers).toEqual([]);
  });
});
