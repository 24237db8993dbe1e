import { describe, expect, it } from 'vitest';
import type { FakeDroidFault } from '../../peers/fake-droid-config.js';
import { expectNoProcessLeft, expectTurnRecorded, ofType, useSessionHarnesses } from '../../support/session-harness.js';

// Faults that end a session before any prompt: version negotiation, initialize, load.
const harness = useSessionHarnesses();

describe('droid session: version negotiation faults', () => {
  const cases: Array<[FakeDroidFault, RegExp]> = [
    ['wrong-protocol', /speaks protocol 0\.0\.1.*expects protocol 1\.220\.0/],
    ['wrong-api', /speaks Factory API 2\.0\.0.*expects Factory API 1\.0\.0/],
    ['missing-version', /announced no factoryProtocolVersion/],
  ];
  for (const [fault, message] of cases) {
    it(`${fault}: the turn fails as protocol_mismatch and no prompt is ever sent`, async () => {
      const h = await harness({ faults: [fault] });
      const runner = await h.create();
      const outcome = await runner.runTurn('must never reach the agent');
      await runner.close();

      const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'failed', reason: 'protocol_mismatch' });
      expect(ofType(logged, 'error').map((event) => [event.code, event.message])).toEqual([
        ['protocol_mismatch', expect.stringMatching(message)],
      ]);
      expect(ofType(logged, 'session.started')).toEqual([]);
      expect(await h.receivedMethods()).toEqual(['droid.initialize_session']);
      expect((await h.store.readSession(runner.id)).status).toBe('needs_attention');
      await expectNoProcessLeft(h.pid());
    });
  }
});

describe('droid session: handshake faults', () => {
  it('malformed-init: the turn fails with a protocol error and no prompt is sent', async () => {
    const h = await harness({ faults: ['malformed-init'] });
    const runner = await h.create();
    const outcome = await runner.runTurn('must never reach the agent');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'failed', reason: 'protocol_error' });
    expect(ofType(logged, 'error')).toEqual([
      expect.objectContaining({
        code: 'protocol_error',
        message: expect.stringMatching(/initialize_session returned an unexpected result/),
      }),
    ]);
    const methods = await h.receivedMethods();
    expect(methods).toContain('droid.initialize_session');
    expect(methods).not.toContain('droid.add_user_message');
    expect((await h.store.readSession(runner.id)).nativeSessionId).toBeUndefined();
    await expectNoProcessLeft(h.pid());
  });

  it('resume of an unknown native session fails as session_load_failed and never initializes a new one', async () => {
    const h = await harness();
    const created = await h.create();
    await created.close();
    // A record whose native conversation droid does not know (e.g. its journal was deleted).
    await h.store.writeSession({ ...(await h.store.readSession(created.id)), nativeSessionId: 'no-such-native-session' });

    const runner = await h.resume(created.id);
    const outcome = await runner.runTurn('must never reach the agent');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'failed', reason: 'session_load_failed' });
    expect(ofType(logged, 'error')).toEqual([
      expect.objectContaining({
        code: 'session_load_failed',
        message: expect.stringMatching(/no-such-native-session: .*Session not found.*not replaced/),
      }),
    ]);
    expect(await h.receivedMethods()).toEqual(['droid.load_session']);
    expect((await h.store.readSession(runner.id)).nativeSessionId).toBe('no-such-native-session');
    expect(h.children).toHaveLength(1);
    await expectNoProcessLeft(h.pid());
  });
});
