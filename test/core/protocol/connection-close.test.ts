import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { isOneWorksError, OneWorksError } from '../../../core/errors.js';
import { createConnection } from '../../../core/protocol/connection.js';
import { createLinkedPair } from '../../../core/transport/in-memory.js';
import { createStreamTransport } from '../../../core/transport/stream-transport.js';
import { createConnectedPair, createConnectionWithRawPeer, createTestEnvelope, flush } from '../../support/linked-pair.js';

const isClosed = (error: unknown): boolean => isOneWorksError(error, 'connection_closed');

describe('Connection.close', () => {
  it('moves new → open → closing → closed and settles closed and signal with the reason', async () => {
    const [left] = createLinkedPair();
    const connection = createConnection(left, createTestEnvelope());
    expect(connection.state).toBe('new');
    await connection.start();
    expect(connection.state).toBe('open');
    const reason = new OneWorksError('protocol_mismatch', 'wrong protocol version');
    const closing = connection.close(reason);
    expect(connection.state).toBe('closing');
    expect(connection.signal.aborted).toBe(true);
    expect(connection.signal.reason).toBe(reason);
    await closing;
    expect(connection.state).toBe('closed');
    await expect(connection.closed).resolves.toBe(reason);
  });

  it('rejects every pending request with CONNECTION_CLOSED whose cause is the reason', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const first = connection.requestRaw('test.a', {});
    const second = connection.requestRaw('test.b', {});
    await peer.waitFor((frame) => frame.id === 'c2');
    const reason = new OneWorksError('process_exited', 'droid exited with code 1');
    await connection.close(reason);
    for (const pending of [first, second]) {
      const error = await pending.catch((caught: unknown) => caught);
      expect(isClosed(error)).toBe(true);
      expect((error as OneWorksError).cause).toBe(reason);
    }
  });

  it('is idempotent: a second close changes nothing and resolves', async () => {
    const { connection } = await createConnectionWithRawPeer();
    const first = new OneWorksError('internal', 'first reason');
    await connection.close(first);
    await connection.close(new OneWorksError('internal', 'second reason'));
    await expect(connection.closed).resolves.toBe(first);
    expect(connection.state).toBe('closed');
  });

  it('rejects calls on a closed connection with CONNECTION_CLOSED', async () => {
    const { connection } = await createConnectionWithRawPeer();
    await connection.close();
    await expect(connection.closed).resolves.toBeUndefined();
    await expect(connection.requestRaw('test.x', {})).rejects.toSatisfy(isClosed);
    await expect(connection.notify('test.y', {})).rejects.toSatisfy(isClosed);
    await expect(connection.start()).rejects.toSatisfy(isClosed);
  });

  it('aborts in-flight handlers and writes no response for them', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    let handlerSignal: AbortSignal | undefined;
    let finish: (() => void) | undefined;
    connection.onRequest('test.ask', (_params, ctx) => {
      handlerSignal = ctx.signal;
      return new Promise((resolve) => (finish = () => resolve({ answer: 'too late' })));
    });
    await peer.transport.send({ jsonrpc: '2.0', id: 'p1', method: 'test.ask', params: {} });
    await flush();
    expect(handlerSignal?.aborted).toBe(false);
    await connection.close();
    expect(handlerSignal?.aborted).toBe(true);
    finish?.();
    await flush();
    expect(peer.received).toEqual([]);
  });

  it('drops inbound messages once closing, even those a tap closed on', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const notes: string[] = [];
    connection.onInbound(() => {
      void connection.close(new OneWorksError('protocol_mismatch', 'first frame announced the wrong version'));
    });
    connection.onNotification((method) => notes.push(method));
    await peer.transport.send({ jsonrpc: '2.0', method: 'test.first', params: {} });
    await connection.closed;
    expect(notes).toEqual([]);
  });
});

describe('Connection and its transport', () => {
  it('closes itself when the peer closes (in-memory)', async () => {
    const { client, server } = await createConnectedPair();
    server.onRequest('test.never-answered', () => new Promise(() => undefined));
    const pending = client.requestRaw('test.never-answered', {});
    await flush();
    await server.close();
    await expect(pending).rejects.toSatisfy(isClosed);
    const reason = await client.closed;
    expect(reason?.code).toBe('connection_closed');
    expect(client.state).toBe('closed');
  });

  it('closes itself at EOF of a stream transport, rejecting pending requests', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const connection = createConnection(createStreamTransport(input, output), createTestEnvelope(), { idPrefix: 'ow-' });
    await connection.start();
    const pending = connection.requestRaw('test.turn', { text: 'hi' });
    const line = await new Promise<string>((resolve) => output.once('data', (chunk: Buffer) => resolve(chunk.toString())));
    expect(JSON.parse(line)).toMatchObject({ id: 'ow-1', method: 'test.turn' });
    input.end();
    await expect(pending).rejects.toSatisfy(isClosed);
    await expect(connection.closed).resolves.toSatisfy(isClosed);
    expect(output.writableEnded).toBe(true);
  });

  it('closing the connection ends the output stream but leaves the input open', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const connection = createConnection(createStreamTransport(input, output), createTestEnvelope());
    await connection.start();
    await connection.close();
    expect(output.writableEnded).toBe(true);
    expect(input.destroyed).toBe(false);
  });
});
