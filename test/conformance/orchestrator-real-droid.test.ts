import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, createOrchestratorRig, executeStep, until } from './orchestrator-rig.js';

// The orchestrator in-process over the real droid: admission with live tool calls, steering
// and cancellation through droid's own interrupt, and no droid (or tool) left behind.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2's Execute supervisor polls every 2 s whether droid lives, then kills its group.
const TOOL_LINGER_MS = 10_000;

const sleeper = (id: string, seconds: number) => (request: Parameters<typeof toolResults>[0]) =>
  toolResults(request).length > 0 ? { text: `${id} slept` } : executeStep(id, `sleep ${seconds}`);

describe('orchestrator with the real droid', () => {
  it('steering during a long Execute supersedes the queue, interrupts, and runs on the same native session', async () => {
    const o = await createOrchestratorRig(
      rigs,
      byPrompt({
        'long job': sleeper('call_orch_steer_1', 2031),
        'queued job': () => ({ text: 'must never run' }),
        'change of plan': () => ({ text: 'steered' }),
      }),
    );
    const first = await o.orchestrator.createSession({ adapter: 'droid', workspace: o.rig.workspace, prompt: 'long job' });
    const id = first.sessionId;
    await until(() => o.rig.processes().some((p) => p.args === 'sleep 2031'));
    const native = (await o.store.readSession(id)).nativeSessionId;
    expect(native).toBeTypeOf('string');
    await o.orchestrator.sendMessage({ sessionId: id, prompt: 'queued job' });
    const steer = await o.orchestrator.sendMessage({ sessionId: id, prompt: 'change of plan', interrupt: true });

    expect(await o.orchestrator.waitForRun(id, 'r2')).toMatchObject({ runStatus: 'cancelled', reason: 'superseded' });
    expect(await o.orchestrator.waitForRun(id, 'r1')).toMatchObject({ runStatus: 'interrupted' });
    expect(await o.orchestrator.waitForRun(id, steer.runId)).toMatchObject({ runStatus: 'completed', text: 'steered' });
    const record = await o.store.readSession(id);
    expect(record.nativeSessionId).toBe(native);
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([
      ['r1', 'interrupted'],
      ['r2', 'cancelled'],
      ['r3', 'completed'],
    ]);
    await o.orchestrator.shutdown();
    expect(await waitForNoProcesses(() => o.rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('admits up to the limit, queues the rest, and a cancel frees its slot for the queued session without touching the other', async () => {
    const o = await createOrchestratorRig(
      rigs,
      byPrompt({
        'job A': sleeper('call_orch_a_1', 2041),
        'job B': sleeper('call_orch_b_1', 2042),
        'job C': () => ({ text: 'C done' }),
      }),
      { maxConcurrentRuns: 2 },
    );
    const a = (await o.orchestrator.createSession({ adapter: 'droid', workspace: await o.dir('a'), prompt: 'job A' })).sessionId;
    const b = (await o.orchestrator.createSession({ adapter: 'droid', workspace: await o.dir('b'), prompt: 'job B' })).sessionId;
    const c = await o.orchestrator.createSession({ adapter: 'droid', workspace: await o.dir('c'), prompt: 'job C' });
    expect(c.state).toBe('queued');
    expect(o.orchestrator.activity()).toEqual({ live: 2, queued: 1 });
    await until(() => ['sleep 2041', 'sleep 2042'].every((cmd) => o.rig.processes().some((p) => p.args === cmd)));
    expect(o.orchestrator.activity()).toEqual({ live: 2, queued: 1 });

    const summary = await o.orchestrator.cancel(a);
    expect(summary).toMatchObject({ state: 'idle', latestRun: { runId: 'r1', status: 'interrupted' } });
    expect(await o.orchestrator.waitForRun(c.sessionId, c.runId)).toMatchObject({ runStatus: 'completed', text: 'C done' });
    // B was never touched: its sleep is still running.
    expect(o.rig.processes().some((p) => p.args === 'sleep 2042')).toBe(true);
    expect(await o.orchestrator.status(b)).toMatchObject({ state: 'working', latestRun: { status: 'running' } });
    await o.orchestrator.cancel(b);
    expect(o.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
    await o.orchestrator.shutdown();
    expect(await waitForNoProcesses(() => o.rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });
});
