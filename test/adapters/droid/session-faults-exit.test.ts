import { describe, expect, it } from 'vitest';
import { expectNoProcessLeft, expectTurnRecorded, ofType, probe, useSessionHarnesses } from '../../support/session-harness.js';

// Faults in how the child goes away: it dies, it closes stdout and lingers, it ignores SIGTERM.
const harness = useSessionHarnesses();

describe('droid session: the child goes away', () => {
  it('die-mid-turn: fails as process_exited and the runtime closes the open tool span', async () => {
    const h = await harness({ faults: ['die-mid-turn'] });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'failed', reason: 'process_exited' });
    const toolUseIds = new Set(ofType(logged, 'tool.call').map((event) => event.toolUseId));
    expect([...toolUseIds]).toEqual(['call_1_0']);
    expect(ofType(logged, 'tool.result')).toEqual([expect.objectContaining({ toolUseId: 'call_1_0', isError: true, closedBy: 'runtime' })]);
    expect(ofType(logged, 'error')).toEqual([
      expect.objectContaining({ code: 'process_exited', message: expect.stringMatching(/exited with code 1 .*dying mid-turn/) }),
    ]);
    const turnCompleted = ofType(logged, 'turn.completed')[0]!;
    expect(ofType(logged, 'tool.result')[0]!.seq).toBeLessThan(turnCompleted.seq);
    expect(await h.children[0]!.exited).toMatchObject({ exitCode: 1, stopReason: undefined, forced: false });
    await expectNoProcessLeft(h.pid());
  });

  it('stdout-closed-before-exit: the outcome is recorded without waiting for the exit', async () => {
    // The fake lingers a minute after closing stdout: only the drain fallback can end this turn
    // within the test's timeout. Nothing of the turn was seen, so droid is restarted and the turn
    // sent once more (issue 14), which meets the same fault; with fallback none the turn then fails.
    const h = await harness({ faults: ['stdout-closed-before-exit'], lingerMs: 60_000, fallback: 'none' });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'failed', reason: 'connection_closed' });
    expect(ofType(logged, 'error')).toEqual([
      expect.objectContaining({ code: 'connection_closed', message: expect.stringMatching(/closed its output before the turn completed/) }),
      expect.objectContaining({ code: 'connection_closed', message: expect.stringMatching(/closed its output before the turn completed/) }),
    ]);
    // Each lingering child was stopped by the runtime, not left to exit on its own.
    expect(h.children).toHaveLength(2);
    for (const child of h.children) expect(await child.exited).toMatchObject({ stopReason: 'crash', exitCode: null });
    await runner.close();
    for (const index of [0, 1]) await expectNoProcessLeft(h.pid(index));
  });

  it('ignore-sigterm: close() escalates to SIGKILL and nothing is left running', async () => {
    const h = await harness({ faults: ['ignore-sigterm'] });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');
    await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    const pid = h.pid();
    expect(probe(pid)).toBeUndefined();

    await runner.close();
    expect(await h.children[0]!.exited).toEqual({ exitCode: null, signal: 'SIGKILL', stopReason: 'shutdown', forced: true });
    await expectNoProcessLeft(pid);
    const logged = await h.logged(runner.id);
    expect(ofType(logged, 'session.closed')).toEqual([expect.objectContaining({ reason: 'shutdown' })]);
    expect(logged.at(-1)?.type).toBe('session.closed');
  });
});
