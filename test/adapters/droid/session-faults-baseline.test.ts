import { describe, expect, it } from 'vitest';
import { expectNoProcessLeft, expectTurnRecorded, ofType, useSessionHarnesses } from '../../support/session-harness.js';

// The baseline the fault tests depart from: no fault, two turns in one process, a third after
// a resume in a new SessionRunner (a new child that loads the native session).
const harness = useSessionHarnesses();

describe('droid session without faults', () => {
  it('runs two turns in one child, then a third after resume, continuing one event log', async () => {
    const h = await harness({ reply: 'Done, as asked.' });
    const first = await h.create();
    for (const prompt of ['one', 'two']) {
      const outcome = await first.runTurn(prompt);
      await expectTurnRecorded(h, first.id, outcome, { status: 'completed', reason: 'completed' });
      expect(outcome.text).toBe('Done, as asked.');
      expect(outcome.usage).toMatchObject({ reported: true });
    }
    await first.close();
    expect(h.children).toHaveLength(1);
    await expectNoProcessLeft(h.pid(0));
    const nativeSessionId = (await h.store.readSession(first.id)).nativeSessionId;
    expect(nativeSessionId).toBeTypeOf('string');
    const seqBeforeResume = (await h.logged(first.id)).at(-1)!.seq;

    const second = await h.resume(first.id);
    const outcome = await second.runTurn('three');
    await second.close();
    const logged = await expectTurnRecorded(h, first.id, outcome, { status: 'completed', reason: 'completed' });
    expect(h.children).toHaveLength(2);
    expect(h.pid(1)).not.toBe(h.pid(0));
    await expectNoProcessLeft(h.pid(1));

    // One initialize, then a load of the same native session by the second child; no replacement.
    const requests = (await h.received()).filter((frame) => frame.type === 'request');
    expect(requests.map((frame) => frame.method)).toEqual([
      'droid.initialize_session',
      'droid.update_session_settings',
      'droid.add_user_message',
      'droid.add_user_message',
      'droid.load_session',
      'droid.update_session_settings',
      'droid.add_user_message',
    ]);
    expect((requests[4]!.params as { sessionId?: unknown }).sessionId).toBe(nativeSessionId);
    const record = await h.store.readSession(first.id);
    expect(record.nativeSessionId).toBe(nativeSessionId);
    expect(record.runs.map((run) => [run.id, run.status])).toEqual([
      ['r1', 'completed'],
      ['r2', 'completed'],
      ['r3', 'completed'],
    ]);
    expect(record.status).toBe('idle');

    // seq continues across processes: 1..n without gaps; every key once; replayed history
    // mapped onto the keys it already had (one assistant message per turn, not five).
    expect(logged.map((event) => event.seq)).toEqual(logged.map((_, index) => index + 1));
    expect(logged.find((event) => event.seq === seqBeforeResume + 1)?.type).toBe('turn.started');
    expect(new Set(logged.map((event) => event.key)).size).toBe(logged.length);
    expect(ofType(logged, 'assistant.message')).toHaveLength(3);
    expect(ofType(logged, 'session.started').map((event) => event.resumed)).toEqual([false, true]);
    expect(ofType(logged, 'session.closed')).toHaveLength(2);
  });
});
