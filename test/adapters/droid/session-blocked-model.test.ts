import { describe, expect, it } from 'vitest';
import { expectNoProcessLeft, expectTurnRecorded, ofType, useSessionHarnesses } from '../../support/session-harness.js';

// droid refuses the session's model override (an organisation policy, a model the account
// cannot use): the settings go again without it, a model.warning names the refused model, and
// the turn runs on droid's default model instead of failing.
const harness = useSessionHarnesses();

describe('droid session: a model that policy blocks', () => {
  it('retries the settings without the override, warns, and completes the turn', async () => {
    const h = await harness({ faults: ['model-blocked'] });
    const runner = await h.create({ model: 'custom:Blocked-9', autonomy: 'medium' });
    const outcome = await runner.runTurn('hello');
    await runner.close();

    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    expect(ofType(logged, 'model.warning')).toEqual([
      expect.objectContaining({
        model: 'custom:Blocked-9',
        message: expect.stringMatching(/not allowed by your organization's policy.*droid's default model/),
      }),
    ]);
    const settings = (await h.received())
      .filter((f) => f.type === 'request' && f.method === 'droid.update_session_settings')
      .map((f) => f.params);
    // droid's own autonomy is always off (issue 17): One Works' medium is applied by its policy.
    expect(settings).toEqual([{ autonomyLevel: 'off', modelId: 'custom:Blocked-9' }, { autonomyLevel: 'off' }]);
    expect(await h.receivedMethods()).toContain('droid.add_user_message');
    await expectNoProcessLeft(h.pid());
  });

  it('without the fault, the override is sent once and no warning is recorded', async () => {
    const h = await harness();
    const runner = await h.create({ model: 'custom:Allowed-1' });
    const outcome = await runner.runTurn('hello');
    await runner.close();
    const logged = await expectTurnRecorded(h, runner.id, outcome, { status: 'completed', reason: 'completed' });
    expect(ofType(logged, 'model.warning')).toEqual([]);
    const settings = (await h.received()).filter((f) => f.type === 'request' && f.method === 'droid.update_session_settings');
    expect(settings).toHaveLength(1);
  });
});
