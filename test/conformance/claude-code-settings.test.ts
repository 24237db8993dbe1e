import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { type CliRig, CliRigs } from '../support/one-works-cli.js';
import { waitForExit } from '../support/rig-processes.js';
import { type ScriptedAnthropic, startScriptedAnthropic } from '../support/scripted-anthropic.js';

// Settings per turn on the real Claude Code 2.1.333, kept warm by the orchestrator between
// `run` and `send`: a model change is applied to the running claude with the `set_model`
// control request (no restart), an effort change restarts it (effort is a launch flag), and a
// model the advisory catalog does not list is passed through with a note, never refused.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// Long enough that only what a test does closes the agent (not the window, not the idle exit).
const WARM = { keepWarmMs: 600_000, idleExitMs: 600_000 };

const claudes = (rig: CliRig) => rig.processes().filter((p) => p.args.includes('--input-format stream-json'));

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type);

async function anthropic(texts: string[]): Promise<ScriptedAnthropic> {
  const model = await startScriptedAnthropic({ steps: texts.map((text) => ({ text })) });
  rigs.defer(() => model.close());
  return model;
}

describe('claude-code: settings per turn in a warm process', () => {
  it('switches the model of the running claude between turns (same pid), restarts it for a new effort', async () => {
    const model = await anthropic(['one', 'two', 'three']);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', claude: { baseUrl: model.baseUrl }, orchestrator: WARM });

    const first = await rig.run(['run', '--adapter', 'claude-code', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const [warm] = claudes(rig);
    expect(warm, 'claude stays up after run exited').toBeDefined();

    const second = await rig.run(['send', id!, '--model', 'model-two', 'second']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('two');
    // model-two is not in the advisory catalog (the configured `scripted` and the aliases): a note, not a refusal.
    const note = "model model-two is not in claude-code's model list, which is advisory";
    expect(second.stderr).toContain(note);
    expect(claudes(rig).map((p) => p.pid)).toEqual([warm!.pid]);

    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps.map((r) => (r.body as { model?: string }).model)).toEqual(['scripted', 'model-two']);
    let events = await rig.readEvents(id!);
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false]);
    expect(ofType(events, 'session.closed')).toEqual([]);
    expect(ofType(events, 'settings.changed').map((e) => e.settings)).toEqual([{ model: 'model-two' }]);
    expect(ofType(events, 'log').filter((e) => e.level === 'warn' && e.message.includes(note))).toHaveLength(1);
    expect((await rig.readSession(id!)).runs.map((run) => [run.status, run.model])).toEqual([
      ['completed', 'scripted'],
      ['completed', 'model-two'],
    ]);

    // Effort is a launch flag of 2.1.333: a new effort needs a new claude, which resumes the session.
    const third = await rig.run(['send', id!, '--effort', 'low', 'third']);
    expect(third.exitCode, third.stderr).toBe(0);
    expect(third.stdout).toContain('three');
    expect(await waitForExit([warm!.pid], 10_000)).toEqual([]);
    events = await rig.readEvents(id!);
    expect(ofType(events, 'session.closed').map((e) => e.reason)).toEqual(['settings_changed']);
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false, true]);
    const replacement = claudes(rig);
    expect(replacement).toHaveLength(1);
    expect(replacement[0]!.args).toContain('--effort low');
    expect(replacement[0]!.args).toContain('--model model-two');
    expect(ofType(events, 'error')).toEqual([]);
  });
});
