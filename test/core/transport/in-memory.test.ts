import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import { createLinkedPair } from '../../../core/transport/in-memory.js';

describe('createLinkedPair', () => {
  it('carries messages both ways, in order, as JSON copies', async () => {
    const [left, right] = createLinkedPair();
    const atLeft: unknown[] = [];
    const atRight: unknown[] = [];
    left.onmessage = (message) => atLeft.push(message);
    right.onmessage = (message) => atRight.push(message);
    await left.start();
    await right.start();
    const sent = { n: 1, nested: { a: [1] }, gone: undefined };
    await left.send(sent);
    await left.send({ n: 2 });
    await right.send({ back: true });
    await tick();
    expect(atRight).toEqual([{ n: 1, nested: { a: [1] } }, { n: 2 }]);
    expect(atRight[0]).not.toBe(sent);
    expect(Object.keys(atRight[0] as object)).not.toContain('gone');
    expect(atLeft).toEqual([{ back: true }]);
  });

  it('holds messages until the receiver starts and has a handler', async () => {
    const [left, right] = createLinkedPair();
    await left.send({ early: 1 });
    const seen: unknown[] = [];
    await right.start();
    await tick();
    right.onmessage = (message) => seen.push(message);
    expect(seen).toEqual([{ early: 1 }]);
  });

  it('never delivers synchronously inside send', async () => {
    const [left, right] = createLinkedPair();
    const seen: unknown[] = [];
    right.onmessage = (message) => seen.push(message);
    await right.start();
    void left.send({ n: 1 });
    expect(seen).toEqual([]);
    await tick();
    expect(seen).toEqual([{ n: 1 }]);
  });

  it('close on one side closes both, once each, after earlier messages arrive', async () => {
    const [left, right] = createLinkedPair();
    const events: string[] = [];
    left.onclose = () => events.push('left closed');
    right.onclose = () => events.push('right closed');
    right.onmessage = (message) => events.push(`right got ${JSON.stringify(message)}`);
    await left.start();
    await right.start();
    const sending = left.send({ last: true });
    await left.close();
    await sending;
    await left.close();
    await tick();
    await right.close();
    expect(events).toEqual(['left closed', 'right got {"last":true}', 'right closed']);
  });

  it('rejects sends on a closed side with CONNECTION_CLOSED', async () => {
    const [left, right] = createLinkedPair();
    await left.start();
    await right.start();
    await right.close();
    await tick();
    await expect(left.send({ n: 1 })).rejects.toSatisfy((error) => isOneWorksError(error, 'connection_closed'));
    await expect(right.send({ n: 1 })).rejects.toSatisfy((error) => isOneWorksError(error, 'connection_closed'));
  });
});
