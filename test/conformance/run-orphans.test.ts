import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { isAlive, type RigProcess, waitForExit, waitForNoProcesses, waitForProcess } from '../support/rig-processes.js';
import type { Step } from '../support/scripted-model.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// Nothing a `one-works` run starts outlives it. Processes are found through /proc: their argv,
// working directory or environment mention the rig's temp root (droid runs with --cwd in the
// workspace and HOME in the state dir; its tools inherit both).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The policy decides every command (issue 17): at autonomy high it runs the scripted ones without
// asking a person (nobody could answer here: the CLI runs without a terminal).
const RUNS_COMMANDS = { autonomy: 'high' };

// droid 0.225.2 runs each Execute under a bash supervisor in its own session, which polls every
// 2 s whether droid is alive and then kills its group; this bounds how long those may linger.
const TOOL_LINGER_MS = 10_000;

const isDroid = (p: RigProcess): boolean => p.args.includes(' exec --input-format stream-jsonrpc');

const execute = (id: string, command: string): Step => ({
  toolCalls: [{ id, name: 'Execute', arguments: { command, riskLevel: 'low', riskLevelReason: 'harmless' } }],
});

// A rig whose model samples the rig's processes when it receives its `sampleAt`-th step.
async function sampledRig(steps: Step[], sampleAt: number): Promise<{ rig: CliRig; sample: () => RigProcess[] }> {
  let sampled: RigProcess[] = [];
  const holder: { rig?: CliRig } = {};
  const wrapped = steps.map(
    (step, index): Step =>
      index !== sampleAt
        ? step
        : (request) => {
            sampled = holder.rig?.processes() ?? [];
            return typeof step === 'function' ? step(request) : step;
          },
  );
  const model = await rigs.model({ steps: wrapped });
  holder.rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
  return { rig: holder.rig, sample: () => sampled };
}

// droid itself and its process group are gone. After a normal end One Works has waited for
// droid's exit, so `withinMs` is 0; after SIGTERM the CLI SIGKILLs the group and exits at once,
// so the kernel may still be tearing droid down for a moment.
async function expectDroidGone(sampled: RigProcess[], withinMs = 0): Promise<void> {
  const droids = sampled.filter(isDroid);
  expect(droids, 'droid was running during the turn').toHaveLength(1);
  const droid = droids[0]!;
  expect(await waitForExit([droid.pid, -droid.pid], withinMs), `droid ${droid.pid} and its group`).toEqual([]);
}

describe('no process outlives one-works', () => {
  // Since issue 15, `run` exits once its turn has settled and the orchestrator closes droid right
  // after, so "gone" is checked within a bound rather than at the CLI's exit.
  it('a text turn: droid and its group are gone right after the CLI exits, nothing refers to the rig', async () => {
    const { rig, sample } = await sampledRig([{ text: 'hello' }], 0);
    const result = await rig.run(['run', '--workspace', rig.workspace, 'hello']);
    expect(result.exitCode, result.stderr).toBe(0);
    await expectDroidGone(sample(), AGENT_CLOSE_MS);
    for (const p of sample()) expect(isAlive(p.pid), p.args).toBe(false);
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  });

  it('a tool turn: droid is gone right after exit, the tool supervisor shortly after', async () => {
    const { rig, sample } = await sampledRig([execute('call_orphans_tool_1', 'echo hi'), { text: 'done' }], 1);
    const result = await rig.run(['run', '--workspace', rig.workspace, 'run a tool']);
    expect(result.exitCode, result.stderr).toBe(0);
    await expectDroidGone(sample(), AGENT_CLOSE_MS);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('SIGINT during a running tool: the turn is interrupted (exit 130) and nothing survives', async () => {
    const model = await rigs.model({ steps: [execute('call_orphans_int_1', 'sleep 3021'), { text: 'never reached' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const cli = rig.start(['run', '--workspace', rig.workspace, 'sleep a while']);
    const during = await waitForProcess(
      () => rig.processes(),
      (p) => p.args === 'sleep 3021',
    );
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    // The interrupted turn has settled when `run` exits; the orchestrator closes droid right after (bounded).
    await expectDroidGone(during, AGENT_CLOSE_MS);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'interrupted' });
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
    expect(
      await waitForExit(
        during.map((p) => p.pid),
        TOOL_LINGER_MS,
      ),
    ).toEqual([]);
  });

  it('SIGTERM during a running tool: exit 130, droid and then its tool are gone', async () => {
    const model = await rigs.model({ steps: [execute('call_orphans_term_1', 'sleep 3022'), { text: 'never reached' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const cli = rig.start(['run', '--workspace', rig.workspace, 'sleep a while']);
    const during = await waitForProcess(
      () => rig.processes(),
      (p) => p.args === 'sleep 3022',
    );
    cli.kill('SIGTERM');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);
    await expectDroidGone(during, 2_000);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('SIGTERM during a turn: the run is not left recorded as running', async () => {
    const model = await rigs.model({ steps: [execute('call_orphans_term_2', 'sleep 3023'), { text: 'never reached' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: RUNS_COMMANDS });
    const cli = rig.start(['run', '--workspace', rig.workspace, 'sleep a while']);
    await waitForProcess(
      () => rig.processes(),
      (p) => p.args === 'sleep 3023',
    );
    cli.kill('SIGTERM');
    expect((await cli.result).exitCode).toBe(130);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.runs[0]?.status).not.toBe('running');
    expect(record.status).not.toBe('working');
  });

  it('a background process started by a tool does not outlive the run', async () => {
    const { rig, sample } = await sampledRig([execute('call_orphans_bg_1', 'sleep 3024 > /dev/null 2>&1 &'), { text: 'started it' }], 1);
    const result = await rig.run(['run', '--workspace', rig.workspace, 'start something in the background']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(
      sample().some((p) => p.args === 'sleep 3024'),
      'the background sleep was running during the turn',
    ).toBe(true);
    await expectDroidGone(sample(), AGENT_CLOSE_MS);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });
});
