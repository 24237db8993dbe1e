import { describe, expect, it } from 'vitest';
import { expectNoProcessLeft, expectTurnRecorded, ofType, probe, useSessionHarnesses } from '../../support/session-harness.js';

// Turns that do not end by themselves: the per-turn deadline and a caller's AbortSignal end them,
// protocol interrupt first, then a stop of the child when the interrupt does not end the turn.
const harness = useSessionHarnesses();
// Long enough for the fake droid to boot under tsx and reach its turn; the deadline then fires.
const RUN_TIMEOUT_MS = 4_000;

describe('droid session: deadlines and cancellation', () => {
  it('silence: the per-turn timeout interrupts, then stops the child; failed as run_timeout', async () => {
    const h = await harness({ faults: ['silence'], timeouts: { runTimeoutMs: RUN_TIMEOUT_MS } });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'failed', reason: 'run_timeout' });
    const methods = await h.receivedMethods();
    expect(methods.slice(methods.indexOf('droid.add_user_message'))).toEqual(['droid.add_user_message', 'droid.interrupt_session']);
    // The fake ignores the interrupt and stdin EOF; SIGTERM ended it.
    expect(await h.children[0]!.exited).toMatchObject({ signal: 'SIGTERM', forced: false });
    expect(ofType(logged, 'error')).toEqual([expect.objectContaining({ code: 'process_exited' })]);
    await runner.close();
    await expectNoProcessLeft(h.pid());
  });

  it("unrelated-turn-id: another turn's completion is logged and ignored; the turn ends by timeout", async () => {
    const h = await harness({ faults: ['unrelated-turn-id'], timeouts: { runTimeoutMs: RUN_TIMEOUT_MS } });
    const runner = await h.create();
    const outcome = await runner.runTurn('go');

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'failed', reason: 'run_timeout' });
    const ignored = ofType(logged, 'log').filter((event) => /ignored a turn completion for another turn \(unrelated-/.test(event.message));
    expect(ignored).toEqual([expect.objectContaining({ level: 'warn' })]);
    expect(ignored[0]!.seq).toBeLessThan(ofType(logged, 'turn.completed')[0]!.seq);
    // The interrupt was answered, but the turn did not end: the child had to be stopped.
    expect(await h.receivedMethods()).toContain('droid.interrupt_session');
    expect(probe(h.pid())).toBe('ESRCH');
    await runner.close();
    await expectNoProcessLeft(h.pid());
  });

  it('an AbortSignal passed to runTurn interrupts the running turn through the protocol', async () => {
    // Long pauses between the fake's turn steps: the turn is still running when the signal fires.
    const h = await harness({ stepMs: 60_000 });
    const runner = await h.create();
    const abort = new AbortController();
    const unsubscribe = runner.subscribe((event) => {
      if (event.type === 'working.changed') abort.abort();
    });
    const outcome = await runner.runTurn('go', {}, abort.signal);
    unsubscribe();

    await expectTurnRecorded(h, runner.id, outcome, { status: 'interrupted', reason: 'cancelled' });
    expect((await h.store.readSession(runner.id)).status).toBe('idle');
    expect(await h.receivedMethods()).toContain('droid.interrupt_session');
    // The protocol interrupt ended the turn: the child was not stopped for it.
    expect(probe(h.pid())).toBeUndefined();
    await runner.close();
    await expectNoProcessLeft(h.pid());
  });
});
