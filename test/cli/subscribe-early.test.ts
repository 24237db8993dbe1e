import { describe, expect, it } from 'vitest';
import { subscribeEarly } from '../../cli/commands/run-follow.js';
import type { OrchestratorClient } from '../../cli/daemon/client.js';
import type { RuntimeEvent } from '../../core/events/index.js';

// `send` subscribes to its session while it makes its own checks; the live view takes the
// events over once it exists. A client whose subscribe is a stand-in: the test plays the server.

const event = (seq: number): RuntimeEvent =>
  ({
    type: 'log',
    sessionId: 's-1',
    seq,
    at: new Date(0).toISOString(),
    key: `k${seq}`,
    level: 'info',
    message: `m${seq}`,
  }) as RuntimeEvent;

function fakeClient(subscribe: OrchestratorClient['subscribe']): OrchestratorClient {
  return { subscribe } as unknown as OrchestratorClient;
}

describe('subscribeEarly', () => {
  it('holds what arrives before the view takes over, then hands it over in order, then each live event', async () => {
    let server: ((event: RuntimeEvent) => void) | undefined;
    const subscribed: string[] = [];
    const early = subscribeEarly(
      Promise.resolve(
        fakeClient(async (sessionId, listener) => {
          subscribed.push(sessionId);
          server = listener;
          return async () => undefined;
        }),
      ),
      's-1',
    );
    await early.ready;
    expect(subscribed).toEqual(['s-1']);
    server!(event(1));
    server!(event(2));
    const seen: number[] = [];
    early.take((e) => seen.push(e.seq));
    expect(seen).toEqual([1, 2]);
    server!(event(3));
    expect(seen).toEqual([1, 2, 3]);
  });

  it('keeps a failed subscription in ready without an unhandled rejection, and one of the connection too', async () => {
    const refused = Object.assign(new Error('no such session'), { code: 'session_not_found' });
    const failing = subscribeEarly(
      Promise.resolve(
        fakeClient(async () => {
          throw refused;
        }),
      ),
      's-none',
    );
    const unreachable = subscribeEarly(Promise.reject(new Error('no orchestrator')), 's-1');
    // Nothing awaited yet: a rejection left unhandled would fail the run (vitest reports it).
    await new Promise((resolve) => setTimeout(resolve, 10));
    await expect(failing.ready).rejects.toBe(refused);
    await expect(unreachable.ready).rejects.toThrow('no orchestrator');
  });
});
