import { describe, expect, it, vi } from 'vitest';
import { SessionRunner } from '../../../core/session/index.js';
import type { SessionRecord, Store } from '../../../core/store/index.js';
import { expectNoProcessLeft, useSessionHarnesses } from '../../support/session-harness.js';

// The handshake of a new droid session sends its settings while the native session id is being
// recorded, and no prompt goes out before that record is written.
const harness = useSessionHarnesses();

// The harness's store, with every write of a record that carries a native session id held
// until `release()`.
function gatedStore(store: Store): { store: Store; held: () => boolean; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  const gated = new Proxy(store, {
    get(target, property) {
      if (property === 'writeSession') {
        return async (record: SessionRecord) => {
          if (record.nativeSessionId !== undefined) {
            held = true;
            await gate;
          }
          return target.writeSession(record);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: gated, held: () => held, release };
}

describe('droid session: handshake', () => {
  it('sends update_session_settings while the native id is recorded, and the prompt only once it is', async () => {
    const h = await harness();
    const gated = gatedStore(h.store);
    const runner = await SessionRunner.create({ ...h.runtime, store: gated.store }, { workspace: h.workspace, autonomy: 'low' });
    try {
      const outcome = runner.runTurn('hello');
      await vi.waitFor(async () => expect(await h.receivedMethods()).toContain('droid.update_session_settings'), {
        timeout: 15_000,
        interval: 20,
      });
      expect(gated.held()).toBe(true);
      expect(await h.receivedMethods()).not.toContain('droid.add_user_message');
      expect((await h.store.readSession(runner.id)).nativeSessionId).toBeUndefined();

      gated.release();
      expect((await outcome).status).toBe('completed');
      expect(await h.receivedMethods()).toEqual(['droid.initialize_session', 'droid.update_session_settings', 'droid.add_user_message']);
      expect((await h.store.readSession(runner.id)).nativeSessionId).toEqual(expect.any(String));
    } finally {
      gated.release();
      await runner.close();
    }
    await expectNoProcessLeft(h.pid());
  });
});
