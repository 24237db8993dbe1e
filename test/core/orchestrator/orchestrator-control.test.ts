import { describe, expect, it } from 'vitest';
import type { TurnInput } from '../../../core/adapter.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// Core behaviour on the in-memory fake adapter. A turn whose prompt starts with `long` or `slow`
// never ends by itself (only an interrupt ends it); `dies` ends failed as when the agent died.
const script = (input: TurnInput) =>
  /^(long|slow)/.test(input.text) ? { hang: true } : input.text === 'dies' ? { fail: 'process_exited' } : {};

describe('orchestrator: steering, cancellation, failures', () => {
  it('steering supersedes the queue, interrupts the live turn and runs the new message on the same native session', async () => {
    // Turns never end by themselves: only an interrupt ends them.
    const h = await harnesses({ fake: { script: () => ({ hang: true }) } });
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'long' });
    const id = first.sessionId;
    h.watch(id);
    // The native session exists once the agent announced it (session.started; logged, since it
    // may come before this subscription: the agent starts as the session is created).
    await h.until(async () => (await h.session.logged(id)).some((e) => e.type === 'session.started'));
    const native = (await h.session.store.readSession(id)).nativeSessionId;
    expect(native).toBeTypeOf('string');
    await h.orchestrator.sendMessage({ sessionId: id, prompt: 'queued a' });
    await h.orchestrator.sendMessage({ sessionId: id, prompt: 'queued b' });
    const steer = await h.orchestrator.sendMessage({ sessionId: id, prompt: 'change of plan', interrupt: true });
    expect(steer.runId).toBe('r4');

    expect(await h.orchestrator.waitForRun(id, 'r2')).toMatchObject({ runStatus: 'cancelled', reason: 'superseded' });
    expect(await h.orchestrator.waitForRun(id, 'r3')).toMatchObject({ runStatus: 'cancelled', reason: 'superseded' });
    expect(await h.orchestrator.waitForRun(id, 'r1')).toMatchObject({ runStatus: 'interrupted', reason: 'cancelled' });
    await h.running(id, 'r4');
    const record = await h.session.store.readSession(id);
    expect(record.nativeSessionId).toBe(native);
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([
      ['r1', 'interrupted'],
      ['r2', 'cancelled'],
      ['r3', 'cancelled'],
      ['r4', 'running'],
    ]);
    // r1's agent was closed before r4 started; r4's agent resumes the same native session.
    const fake = h.fake!;
    expect(fake.log.closes).toBeGreaterThanOrEqual(1);
    expect(fake.log.opened).toHaveLength(2);
    expect(fake.log.opened.map((spec) => spec.nativeSessionId)).toEqual([undefined, native]);
    expect(fake.log.prompts.map((p) => p.input.text)).toEqual(['long', 'change of plan']);
    const summary = await h.orchestrator.cancel(id);
    expect(summary).toMatchObject({ state: 'idle', queueDepth: 0, latestRun: { runId: 'r4', status: 'interrupted' } });
  });

  it('cancel with a run id cancels only that run: a queued one is dropped, the live one interrupted, the others go on', async () => {
    const h = await harnesses({ fake: { script: () => ({ hang: true }) } });
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'long' });
    const id = first.sessionId;
    h.watch(id);
    const second = await h.orchestrator.sendMessage({ sessionId: id, prompt: 'queued a' });
    const third = await h.orchestrator.sendMessage({ sessionId: id, prompt: 'queued b' });
    await h.running(id, first.runId);

    // A queued run: dropped, the live one and the other queued one untouched.
    expect(await h.orchestrator.cancel(id, second.runId)).toMatchObject({ state: 'working', queueDepth: 1 });
    expect(await h.orchestrator.waitForRun(id, second.runId)).toMatchObject({ runStatus: 'cancelled', reason: 'cancelled' });
    expect((await h.session.store.readSession(id)).runs.find((run) => run.id === first.runId)?.status).toBe('running');

    // The live run: interrupted; the queued run behind it then starts.
    await h.orchestrator.cancel(id, first.runId);
    expect(await h.orchestrator.waitForRun(id, first.runId)).toMatchObject({ runStatus: 'interrupted' });
    await h.running(id, third.runId);

    // A run that is over: nothing to do; an unknown run: a usage error.
    expect(await h.orchestrator.cancel(id, first.runId)).toMatchObject({ state: 'working' });
    await expect(h.orchestrator.cancel(id, 'r99')).rejects.toMatchObject({ code: 'usage' });
    await h.orchestrator.cancel(id);
    expect(await h.orchestrator.waitForRun(id, third.runId)).toMatchObject({ runStatus: 'interrupted' });
  });

  it('a failed turn drops the queued turns behind it as predecessor_failed and the session needs attention', async () => {
    const h = await harnesses({ fake: { script } });
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'dies' });
    const id = first.sessionId;
    await h.orchestrator.sendMessage({ sessionId: id, prompt: 'two' });
    await h.orchestrator.sendMessage({ sessionId: id, prompt: 'three' });
    const failed = await h.orchestrator.waitForRun(id, 'r1');
    expect(failed.runStatus).toBe('failed');
    const waited = await h.orchestrator.wait([id], 60_000);
    expect(waited.timedOut).toBe(false);
    const record = await h.session.store.readSession(id);
    expect(record.runs.map((run) => [run.id, run.status, run.reason])).toEqual([
      ['r1', 'failed', failed.reason],
      ['r2', 'cancelled', 'predecessor_failed'],
      ['r3', 'cancelled', 'predecessor_failed'],
    ]);
    expect(record.status).toBe('needs_attention');
    expect(waited.settled[0]).toMatchObject({ state: 'needs_attention', queueDepth: 0 });
    expect(waited.settled[0]!.attention!.join('\n')).toContain('r2, r3');
    expect(h.fake!.log.opened).toHaveLength(1);
    expect(h.fake!.log.prompts.map((p) => p.input.text)).toEqual(['dies']);
  });

  it('fails a turn that outlives runTimeoutMs through the runner deadline', async () => {
    const h = await harnesses({ fake: { script }, limits: { runTimeoutMs: 1_500 } });
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'slow' });
    expect(await h.orchestrator.waitForRun(first.sessionId, 'r1')).toMatchObject({ status: 'failed', reason: 'run_timeout' });
    expect(h.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
  });

  it('wait returns pending sessions when it times out, which is not a failure', async () => {
    const h = await harnesses({ fake: { script } });
    const first = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'long' });
    const waited = await h.orchestrator.wait([first.sessionId], 200);
    expect(waited).toMatchObject({ timedOut: true, settled: [], pending: [{ sessionId: first.sessionId, state: 'working' }] });
  });
});
