import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { isOneWorksError, OneWorksError } from '../../../core/errors.js';
import type { RequestDescriptor } from '../../../core/protocol/types.js';
import { createConnectedPair, createConnectionWithRawPeer, flush, TEST_CANCEL_METHOD } from '../../support/linked-pair.js';

const Echo: RequestDescriptor<{ text: string }, { echoed: string }> = {
  method: 'test.echo',
  params: z.strictObject({ text: z.string() }),
  result: z.looseObject({ echoed: z.string() }),
};

// Captures a rejection so that its fields can be asserted.
async function rejectionOf(promise: Promise<unknown>): Promise<OneWorksError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  if (!(error instanceof OneWorksError)) throw new Error(`expected a OneWorksError rejection, got ${String(error)}`);
  return error;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('Connection.request', () => {
  it('sends string ids with the prefix and returns the parsed result', async () => {
    const { client, server } = await createConnectedPair();
    const seenIds: unknown[] = [];
    server.onRequest('test.echo', async (params, ctx) => {
      seenIds.push(ctx.id);
      return { echoed: (params as { text: string }).text, extra: 1 };
    });
    await expect(client.request(Echo, { text: 'a' })).resolves.toEqual({ echoed: 'a', extra: 1 });
    await expect(client.request(Echo, { text: 'b' })).resolves.toEqual({ echoed: 'b', extra: 1 });
    expect(seenIds).toEqual(['c1', 'c2']);
  });

  it('matches responses that arrive out of order', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const first = connection.requestRaw('test.slow', { n: 1 });
    const second = connection.requestRaw('test.fast', { n: 2 });
    await peer.waitFor((frame) => frame.id === 'c2');
    await peer.transport.send({ jsonrpc: '2.0', id: 'c2', result: 'two' });
    await peer.transport.send({ jsonrpc: '2.0', id: 'c1', result: 'one' });
    await expect(second).resolves.toBe('two');
    await expect(first).resolves.toBe('one');
  });

  it('rejects invalid params before sending anything', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const error = await rejectionOf(connection.request(Echo, { text: 42 } as unknown as { text: string }));
    expect(error.code).toBe('internal');
    expect(error.message).toContain('test.echo');
    expect(error.message).toContain('text');
    await flush();
    expect(peer.received).toEqual([]);
  });

  it('rejects a result that does not match the schema with PROTOCOL_ERROR', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const pending = connection.request(Echo, { text: 'x' });
    await peer.waitFor((frame) => frame.id === 'c1');
    await peer.transport.send({ jsonrpc: '2.0', id: 'c1', result: { echoed: 7 } });
    const error = await rejectionOf(pending);
    expect(error.code).toBe('protocol_error');
    expect(error.message).toMatch(/test\.echo.*echoed/);
  });

  it('turns an error response into PEER_ERROR with the wire facts', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const pending = connection.requestRaw('test.fail', {});
    await peer.waitFor((frame) => frame.id === 'c1');
    await peer.transport.send({
      jsonrpc: '2.0',
      id: 'c1',
      error: { code: -32602, message: 'params.cwd: Required', data: { field: 'cwd' } },
    });
    const error = await rejectionOf(pending);
    expect(error.code).toBe('peer_error');
    expect(error.data).toEqual({ method: 'test.fail', code: -32602, message: 'params.cwd: Required', data: { field: 'cwd' } });
  });

  it('sends notifications without an id', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    await connection.notify('test.note', { a: 1 });
    expect(await peer.waitFor((frame) => frame.method === 'test.note')).toEqual({ jsonrpc: '2.0', method: 'test.note', params: { a: 1 } });
  });
});

describe('Connection.request deadlines and cancellation', () => {
  it('rejects with REQUEST_TIMEOUT naming the method and the deadline, and reports a late response', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { connection, peer, problems } = await createConnectionWithRawPeer();
    const pending = connection.requestRaw('test.hang', {}, { timeoutMs: 500 });
    let settled = false;
    const outcome = rejectionOf(pending).finally(() => {
      settled = true;
    });
    await peer.waitFor((frame) => frame.id === 'c1');
    await vi.advanceTimersByTimeAsync(499);
    await flush();
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await outcome;
    expect(error.code).toBe('request_timeout');
    expect(error.message).toContain('test.hang');
    expect(error.message).toContain('500 ms');
    await peer.transport.send({ jsonrpc: '2.0', id: 'c1', result: 'late' });
    await flush();
    expect(problems.map((problem) => problem.data?.id)).toEqual(['c1']);
  });

  it('uses the connection default deadline when the call names none', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { connection } = await createConnectionWithRawPeer({ connection: { defaultTimeoutMs: 1000 } });
    const outcome = rejectionOf(connection.requestRaw('test.hang', {}));
    await vi.advanceTimersByTimeAsync(1000);
    const error = await outcome;
    expect(error.code).toBe('request_timeout');
    expect(error.data).toMatchObject({ timeoutMs: 1000 });
  });

  it('does not time out a request that was answered', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { connection, peer, problems } = await createConnectionWithRawPeer();
    const pending = connection.requestRaw('test.quick', {}, { timeoutMs: 100 });
    await peer.waitFor((frame) => frame.id === 'c1');
    await peer.transport.send({ jsonrpc: '2.0', id: 'c1', result: 'ok' });
    await expect(pending).resolves.toBe('ok');
    await vi.advanceTimersByTimeAsync(1000);
    expect(problems).toEqual([]);
  });

  it('rejects with REQUEST_CANCELLED when the signal aborts, keeping the reason as cause', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const controller = new AbortController();
    const pending = connection.requestRaw('test.long', {}, { signal: controller.signal });
    await peer.waitFor((frame) => frame.id === 'c1');
    const reason = new Error('user pressed ctrl-c');
    controller.abort(reason);
    const error = await rejectionOf(pending);
    expect(error.code).toBe('request_cancelled');
    expect(error.cause).toBe(reason);
  });

  it('sends nothing when the signal is already aborted', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const error = await rejectionOf(connection.requestRaw('test.never', {}, { signal: AbortSignal.abort() }));
    expect(error.code).toBe('request_cancelled');
    await flush();
    expect(peer.received).toEqual([]);
  });

  it('tells the peer about an abandoned request when the envelope can', async () => {
    const { connection, peer } = await createConnectionWithRawPeer({ cancel: true });
    const controller = new AbortController();
    const pending = connection.requestRaw('test.long', {}, { signal: controller.signal });
    await peer.waitFor((frame) => frame.id === 'c1');
    controller.abort();
    await expect(pending).rejects.toSatisfy((error) => isOneWorksError(error, 'request_cancelled'));
    const cancel = await peer.waitFor((frame) => frame.method === TEST_CANCEL_METHOD);
    expect(cancel.params).toEqual({ id: 'c1' });
  });
});
