import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { type CliRig, CliRigs, CODEX_TEST_MODEL } from '../support/one-works-cli.js';
import { waitForExit } from '../support/rig-processes.js';
import { type ScriptedResponses, startScriptedResponses } from '../support/scripted-responses.js';

// Settings per turn on the real Codex 0.171.0, kept warm by the orchestrator between `run` and
// `send`: `turn/start` carries the model and effort of each turn, so a change is applied to the
// running `codex app-server` (same pid, no second session.started) and the next model request
// names the new model.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// Long enough that only what a test does closes the agent (not the window, not the idle exit).
const WARM = { keepWarmMs: 600_000, idleExitMs: 600_000 };

const codexes = (rig: CliRig) => rig.processes().filter((p) => p.args.includes('app-server'));

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((event): event is Extract<RuntimeEvent, { type: T }> => event.type === type);

async function responses(texts: string[]): Promise<ScriptedResponses> {
  const model = await startScriptedResponses({ steps: texts.map((text) => ({ text })) });
  rigs.defer(() => model.close());
  return model;
}

const body = (request: { body: unknown }) => request.body as { model?: string; reasoning?: { effort?: string } | null };

describe('codex: settings per turn in a warm process', () => {
  it('switches the model and effort of the running codex between turns (same pid, the next request names them)', async () => {
    const model = await responses(['one', 'two', 'three']);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl }, orchestrator: WARM });

    const first = await rig.run(['run', '--adapter', 'codex', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const [warm] = codexes(rig);
    expect(warm, 'codex stays up after run exited').toBeDefined();

    const second = await rig.run(['send', id!, '--model', 'model-two', 'second']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('two');
    expect(codexes(rig).map((p) => p.pid)).toEqual([warm!.pid]);

    const third = await rig.run(['send', id!, '--effort', 'high', 'third']);
    expect(third.exitCode, third.stderr).toBe(0);
    expect(third.stdout).toContain('three');
    expect(codexes(rig).map((p) => p.pid)).toEqual([warm!.pid]);

    const steps = model.requests.filter((r) => r.kind === 'step');
    expect(steps.map((r) => body(r).model)).toEqual([CODEX_TEST_MODEL, 'model-two', 'model-two']);
    expect(body(steps[2]!).reasoning?.effort).toBe('high');
    expect(body(steps[1]!).reasoning?.effort).not.toBe('high');
    const events = await rig.readEvents(id!);
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false]);
    expect(ofType(events, 'session.closed')).toEqual([]);
    expect(ofType(events, 'settings.changed').map((e) => e.settings)).toEqual([{ model: 'model-two' }, { effort: 'high' }]);
    expect((await rig.readSession(id!)).runs.map((run) => [run.status, run.model, run.effort])).toEqual([
      ['completed', CODEX_TEST_MODEL, undefined],
      ['completed', 'model-two', undefined],
      ['completed', 'model-two', 'high'],
    ]);
    expect(ofType(events, 'error')).toEqual([]);
  });

  it('replaces a warm codex that no longer answers (stopped): ready() is a round trip, not a look at the pipe', async () => {
    const model = await responses(['one', 'two']);
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', codex: { baseUrl: model.baseUrl }, orchestrator: WARM });
    const first = await rig.run(['run', '--adapter', 'codex', '--workspace', rig.workspace, 'first']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    const [warm] = codexes(rig);
    expect(warm, 'codex stays up after run exited').toBeDefined();
    // Alive, its pipes open, but it answers nothing.
    process.kill(warm!.pid, 'SIGSTOP');
    rigs.defer(async () => {
      try {
        process.kill(warm!.pid, 'SIGCONT');
      } catch {
        // already gone
      }
    });
    const second = await rig.run(['send', id!, 'second']);
    expect(second.exitCode, second.stderr).toBe(0);
    expect(second.stdout).toContain('two');
    expect(await waitForExit([warm!.pid], 30_000)).toEqual([]);
    const events = await rig.readEvents(id!);
    expect(ofType(events, 'session.closed').map((e) => e.reason)).toEqual(['agent_gone']);
    expect(ofType(events, 'session.started').map((e) => e.resumed)).toEqual([false, true]);
    expect(codexes(rig).map((p) => p.pid)).not.toContain(warm!.pid);
    expect((await rig.readSession(id!)).runs.map((run) => run.status)).toEqual(['completed', 'completed']);
  });
});
