import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../../core/adapter.js';
import { SessionRunner, type SessionRuntime } from '../../../core/session/index.js';
import { createFakeAdapter, createFakeRuntime, type FakeAdapterOptions, type FakeAgent } from '../../support/fake-adapter.js';

// core/session on the in-memory fake adapter: turns, asks, interrupts, deadlines, settings and
// resume, with no agent process and no droid.

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function setup(
  options: FakeAdapterOptions = {},
  overrides: Partial<SessionRuntime> = {},
): Promise<{ fake: FakeAgent; rt: SessionRuntime; workspace: string }> {
  const root = await mkdtemp(join(tmpdir(), 'ow-fake-runner-'));
  roots.push(root);
  const fake = createFakeAdapter(options);
  return { fake, rt: await createFakeRuntime(fake, join(root, 'state'), overrides), workspace: root };
}

const ASK: Omit<PermissionAsk, 'requestId'> = {
  kind: 'tool',
  tools: [{ toolUseId: 't1', name: 'Shell', kind: 'execute', label: 'rm -rf build', command: 'rm -rf build', input: {} }],
  options: ['allow-once', 'deny'],
};

describe('SessionRunner on the fake adapter', () => {
  it('runs a turn: records the native id before the reply, the run, and the events in order', async () => {
    const { fake, rt, workspace } = await setup();
    const runner = await SessionRunner.create(rt, { workspace, autonomy: 'low', model: 'm1' });
    const outcome = await runner.runTurn('hello');
    expect(outcome).toEqual({
      status: 'completed',
      reason: 'completed',
      text: 'reply to hello',
      usage: expect.objectContaining({ reported: true }),
    });
    expect(fake.log.prompts[0]?.input).toMatchObject({
      runId: 'r1',
      text: 'hello',
      settings: { model: 'm1', effort: undefined, autonomy: 'low' },
    });
    const record = await rt.store.readSession(runner.id);
    expect(record).toMatchObject({ adapter: 'fake', nativeSessionId: `fake-${runner.id}`, status: 'idle' });
    expect(record.runs.map((run) => [run.id, run.status, run.text])).toEqual([['r1', 'completed', 'reply to hello']]);
    await runner.close();
    const types = (await rt.store.readEvents(runner.id)).map((event) => event.type);
    expect(types).toEqual(
      expect.arrayContaining(['turn.started', 'session.started', 'assistant.message', 'turn.completed', 'session.closed']),
    );
    expect(types.indexOf('turn.started')).toBeLessThan(types.indexOf('turn.completed'));
    expect(fake.log.open()).toBe(0);
  });

  it('sends an ask through the runtime decider; a deny fails the turn and the session needs attention', async () => {
    const asked: PermissionAsk[] = [];
    const { fake, rt, workspace } = await setup(
      { script: () => ({ ask: ASK }) },
      {
        decide: async (ask) => {
          asked.push(ask);
          return { decision: 'deny', by: 'policy', reason: 'denied by policy' };
        },
      },
    );
    const runner = await SessionRunner.create(rt, { workspace, autonomy: 'low' });
    const outcome = await runner.runTurn('clean up');
    expect(outcome).toMatchObject({ status: 'failed', reason: 'denied' });
    expect(asked).toEqual([{ ...ASK, requestId: 'ask-1' }]);
    expect(fake.log.decisions).toEqual([{ decision: 'deny', by: 'policy', reason: 'denied by policy' }]);
    expect((await rt.store.readSession(runner.id)).status).toBe('needs_attention');
    await runner.close();
    const events = await rt.store.readEvents(runner.id);
    expect(events.filter((e) => e.type.startsWith('permission.')).map((e) => e.type)).toEqual([
      'permission.requested',
      'permission.decided',
    ]);
  });

  it('interrupts a live turn when its signal aborts', async () => {
    const { fake, rt, workspace } = await setup({ script: () => ({ hang: true }) });
    const runner = await SessionRunner.create(rt, { workspace, autonomy: 'low' });
    const controller = new AbortController();
    const turn = runner.runTurn('long', {}, controller.signal);
    while (fake.log.prompts.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    expect(await turn).toMatchObject({ status: 'interrupted', reason: 'cancelled' });
    expect(fake.log.interrupts).toBe(1);
    await runner.close();
  });

  it('fails a turn that outlives the run deadline, after interrupting it', async () => {
    const { fake, rt, workspace } = await setup({ script: () => ({ hang: true }) }, { runTimeoutMs: 200 });
    const runner = await SessionRunner.create(rt, { workspace, autonomy: 'low' });
    expect(await runner.runTurn('longer')).toMatchObject({ status: 'failed', reason: 'run_timeout' });
    expect(fake.log.interrupts).toBe(1);
    await runner.close();
  });

  it('asks the adapter whether the running agent can take other settings', async () => {
    const fixed = await setup();
    const runner = await SessionRunner.create(fixed.rt, { workspace: fixed.workspace, autonomy: 'low', model: 'm1' });
    await runner.runTurn('one');
    expect(runner.canApplySettings({ model: 'm1', autonomy: 'low' })).toBe(true);
    expect(runner.canApplySettings({ model: 'm2', autonomy: 'low' })).toBe(false);
    await runner.close();

    const flexible = await setup({ perTurnSettings: true });
    const other = await SessionRunner.create(flexible.rt, { workspace: flexible.workspace, autonomy: 'low', model: 'm1' });
    await other.runTurn('one');
    expect(other.canApplySettings({ model: 'm2', effort: 'high', autonomy: 'high' })).toBe(true);
    await other.runTurn('two', { model: 'm2', effort: 'high', autonomy: 'high' });
    expect(flexible.fake.log.prompts.at(-1)?.input.settings).toEqual({ model: 'm2', effort: 'high', autonomy: 'high' });
    await other.close();
    expect(runner.canApplySettings({ model: 'm1', autonomy: 'low' })).toBe(false);
  });

  it('resumes a recorded session with its native id in a new runner', async () => {
    const { fake, rt, workspace } = await setup();
    const first = await SessionRunner.create(rt, { workspace, autonomy: 'low' });
    await first.runTurn('one');
    await first.close();
    const again = await SessionRunner.resume(rt, first.id);
    expect(await again.runTurn('two')).toMatchObject({ status: 'completed', text: 'reply to two' });
    await again.close();
    expect(fake.log.opened.map((spec) => spec.nativeSessionId)).toEqual([undefined, `fake-${first.id}`]);
    expect((await rt.store.readSession(first.id)).runs.map((run) => run.id)).toEqual(['r1', 'r2']);
  });
});
