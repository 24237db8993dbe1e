import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { waitForExit } from '../support/rig-processes.js';
import { HARNESS, referenceRig } from './process-runner-support.js';

// The reference runner kept warm by the orchestrator between turns (keepWarmMs): the next send
// goes to the same runner process; one killed while warm is replaced by a new process that
// reopens the session from its directory. A model failure is a provider_error turn.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ADAPTER = `process:${HARNESS}`;
const WARM = { keepWarmMs: 600_000, idleExitMs: 600_000 };

const runners = (rig: CliRig) => rig.processes().filter((p) => p.args.includes('openai-runner.mjs'));
const started = (events: RuntimeEvent[]) => events.flatMap((e) => (e.type === 'session.started' ? [e.resumed] : []));

describe('process runner: warm between turns', () => {
  it('gives the next send to the same runner, and replaces one killed while warm', async () => {
    const { rig, model } = await referenceRig(rigs, [{ text: 'one' }, { text: 'two' }, { text: 'three' }], {}, undefined, WARM);
    const first = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const [warm] = runners(rig);
    expect(warm, 'the runner stays up after run exited').toBeDefined();

    const second = await rig.run(['send', id!, 'second']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('two');
    expect(runners(rig).map((p) => p.pid)).toEqual([warm!.pid]);
    expect(started(await rig.readEvents(id!))).toEqual([false]);

    process.kill(warm!.pid, 'SIGKILL');
    expect(await waitForExit([warm!.pid], 10_000)).toEqual([]);
    const third = await rig.run(['send', id!, 'third']);
    expect(third.exitCode, third.stderr).toBe(0);
    const events = await rig.readEvents(id!);
    expect(started(events)).toEqual([false, true]);
    expect((await rig.readSession(id!)).runs.map((run) => run.status)).toEqual(['completed', 'completed', 'completed']);
    // The new process reopened the whole conversation: three prompts, two answers before the third.
    const last = model.requests.at(-1)!.body as { messages: Array<{ role: string }> };
    expect(last.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(events.filter((e) => e.type === 'log' && e.message.startsWith('checkpoint of run'))).toHaveLength(3);
  });

  it('a model failure (HTTP 500) ends the turn as failed with provider_error and the runner says why', async () => {
    const { rig } = await referenceRig(rigs, [{ httpError: 500 }]);
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'hello']);
    expect(result.exitCode).not.toBe(0);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'failed', reason: 'provider_error' });
    const errors = (await rig.closedEvents(id!)).filter((e) => e.type === 'error');
    expect(errors[0]).toMatchObject({ code: 'provider_error', message: expect.stringContaining('HTTP 500') });
  });
});
