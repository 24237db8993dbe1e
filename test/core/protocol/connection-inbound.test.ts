import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { OneWorksError, type OneWorksError as OneWorksErrorType } from '../../../core/errors.js';
import { createConnection } from '../../../core/protocol/connection.js';
import { ProtocolError } from '../../../core/protocol/protocol-error.js';
import { createStreamTransport } from '../../../core/transport/stream-transport.js';
import { createConnectedPair, createConnectionWithRawPeer, createTestEnvelope, flush } from '../../support/linked-pair.js';

describe('Connection inbound requests', () => {
  it('answers a server request while its own request is still pending', async () => {
    const { client, server } = await createConnectedPair();
    client.onRequest('test.permission', async (params) => ({ allowed: (params as { tool: string }).tool === 'Read' }));
    server.onRequest('test.turn', async () => {
      // The server asks the client something before answering the client's request.
      const answer = await server.requestRaw('test.permission', { tool: 'Read' });
      return { turn: 'done', answer };
    });
    await expect(client.requestRaw('test.turn', {})).resolves.toEqual({ turn: 'done', answer: { allowed: true } });
  });

  it('runs handlers concurrently: a slow handler does not hold back the next request', async () => {
    const { client, server } = await createConnectedPair();
    let release: (() => void) | undefined;
    server.onRequest('test.slow', () => new Promise((resolve) => (release = () => resolve('slow'))));
    server.onRequest('test.fast', async () => 'fast');
    const slow = client.requestRaw('test.slow', {});
    await expect(client.requestRaw('test.fast', {})).resolves.toBe('fast');
    await flush();
    release?.();
    await expect(slow).resolves.toBe('slow');
  });

  it('answers a throwing handler with -32603 and its message, without a stack', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    connection.onRequest('test.boom', async () => {
      throw new OneWorksError('internal', 'the policy engine failed');
    });
    connection.onRequest('test.sync-boom', () => {
      throw new Error('thrown synchronously');
    });
    await peer.transport.send({ jsonrpc: '2.0', id: 'p1', method: 'test.boom', params: {} });
    await peer.transport.send({ jsonrpc: '2.0', id: 'p2', method: 'test.sync-boom', params: {} });
    const first = await peer.waitFor((frame) => frame.id === 'p1');
    const second = await peer.waitFor((frame) => frame.id === 'p2');
    expect(first).toEqual({ jsonrpc: '2.0', id: 'p1', error: { code: -32603, message: 'the policy engine failed' } });
    expect(second).toEqual({ jsonrpc: '2.0', id: 'p2', error: { code: -32603, message: 'thrown synchronously' } });
  });

  it('lets a handler choose the wire error with ProtocolError', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    connection.onRequest('test.strict', async () => {
      throw ProtocolError.invalidParams('options must not be empty', { field: 'options' });
    });
    await peer.transport.send({ jsonrpc: '2.0', id: 'p1', method: 'test.strict', params: {} });
    const reply = await peer.waitFor((frame) => frame.id === 'p1');
    expect(reply.error).toEqual({ code: -32602, message: 'options must not be empty', data: { field: 'options' } });
  });

  it('answers an unknown method with -32601', async () => {
    const { peer } = await createConnectionWithRawPeer();
    await peer.transport.send({ jsonrpc: '2.0', id: 'p1', method: 'test.nobody', params: {} });
    const reply = await peer.waitFor((frame) => frame.id === 'p1');
    expect(reply.error).toMatchObject({ code: -32601, message: expect.stringContaining('test.nobody') });
  });

  it('answers null when a handler returns nothing', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    connection.onRequest('test.void', async () => undefined);
    await peer.transport.send({ jsonrpc: '2.0', id: 'p1', method: 'test.void', params: {} });
    expect(await peer.waitFor((frame) => frame.id === 'p1')).toEqual({ jsonrpc: '2.0', id: 'p1', result: null });
  });
});

describe('Connection inbound notifications and taps', () => {
  it('hands notifications to every listener, in order, and survives a throwing listener', async () => {
    const { connection, peer, problems } = await createConnectionWithRawPeer();
    const seen: string[] = [];
    connection.onNotification(() => {
      throw new Error('listener bug');
    });
    connection.onNotification((method, params) => seen.push(`${method}:${JSON.stringify(params)}`));
    await peer.transport.send({ jsonrpc: '2.0', method: 'test.progress', params: { n: 1 } });
    await peer.transport.send({ jsonrpc: '2.0', method: 'test.progress', params: { n: 2 } });
    await flush();
    expect(seen).toEqual(['test.progress:{"n":1}', 'test.progress:{"n":2}']);
    expect(problems.map((problem) => problem.code)).toEqual(['internal', 'internal']);
  });

  it('calls a listener added during a notification from the next notification on, with one listener or several', async () => {
    for (const initial of [1, 2]) {
      const { connection, peer } = await createConnectionWithRawPeer();
      const seen: string[] = [];
      let added = false;
      for (let i = 0; i < initial; i++) {
        connection.onNotification((_method, params) => {
          seen.push(`first${i}:${JSON.stringify(params)}`);
          if (!added) {
            added = true;
            connection.onNotification((_method, later) => seen.push(`added:${JSON.stringify(later)}`));
          }
        });
      }
      await peer.transport.send({ jsonrpc: '2.0', method: 'test.progress', params: { n: 1 } });
      await peer.transport.send({ jsonrpc: '2.0', method: 'test.progress', params: { n: 2 } });
      await flush();
      expect(seen.filter((entry) => entry.startsWith('added'))).toEqual(['added:{"n":2}']);
      expect(seen.filter((entry) => entry.startsWith('first0'))).toEqual(['first0:{"n":1}', 'first0:{"n":2}']);
    }
  });

  it('stops showing frames to a tap that removed itself', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const tapped: unknown[] = [];
    const notes: string[] = [];
    const stop = connection.onInbound((message) => {
      stop();
      tapped.push(message);
    });
    connection.onNotification((method) => notes.push(method));
    await peer.transport.send({ jsonrpc: '2.0', method: 'test.one', params: {} });
    await peer.transport.send({ jsonrpc: '2.0', method: 'test.two', params: {} });
    await flush();
    expect(tapped).toHaveLength(1);
    expect(notes).toEqual(['test.one', 'test.two']);
  });

  it('shows every raw inbound message to taps before dispatch', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const order: string[] = [];
    connection.onInbound((message) => order.push(`tap:${(message as { method?: string }).method ?? 'response'}`));
    connection.onNotification((method) => order.push(`listener:${method}`));
    await peer.transport.send({ jsonrpc: '2.0', method: 'test.hello', params: {}, version: '1.2.3' });
    await peer.transport.send({ jsonrpc: '2.0', id: 7, result: {} });
    await flush();
    expect(order).toEqual(['tap:test.hello', 'listener:test.hello', 'tap:response']);
  });
});

describe('Connection problems', () => {
  it('ignores and reports a response for an unknown id and a second response for the same id', async () => {
    const { connection, peer, problems } = await createConnectionWithRawPeer();
    const pending = connection.requestRaw('test.twice', {});
    await peer.waitFor((frame) => frame.id === 'c1');
    await peer.transport.send({ jsonrpc: '2.0', id: 'c1', result: {} });
    // droid 0.225.2 answered one request with a result and then an error.
    await peer.transport.send({ jsonrpc: '2.0', id: 'c1', error: { code: -32603, message: 'No active session.' } });
    await peer.transport.send({ jsonrpc: '2.0', id: 'nobody', result: 1 });
    await expect(pending).resolves.toEqual({});
    await flush();
    expect(problems.map((problem) => [problem.code, problem.data?.id])).toEqual([
      ['protocol_error', 'c1'],
      ['protocol_error', 'nobody'],
    ]);
    expect(connection.state).toBe('open');
  });

  it('reports invalid messages and errors without a request id', async () => {
    const { connection, peer, problems } = await createConnectionWithRawPeer();
    await peer.transport.send({ jsonrpc: '2.0', id: true, method: 'boolean.id' });
    await peer.transport.send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Invalid JSON-RPC message' } });
    await flush();
    expect(problems.map((problem) => problem.code)).toEqual(['protocol_error', 'peer_error']);
    expect(problems[0]?.data).toMatchObject({ reason: 'id is neither a string nor a number' });
    expect(problems[1]?.data).toMatchObject({ code: -32700, message: 'Invalid JSON-RPC message' });
    expect(connection.state).toBe('open');
  });

  it('reports malformed lines from a stream transport and keeps working', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const connection = createConnection(createStreamTransport(input, output, { maxLineBytes: 256 }), createTestEnvelope());
    const problems: OneWorksErrorType[] = [];
    const notes: string[] = [];
    connection.onProblem((problem) => problems.push(problem));
    connection.onNotification((method) => notes.push(method));
    await connection.start();
    input.write(`garbage\n{"method":"x","params":"${'y'.repeat(500)}"}\n{"jsonrpc":"2.0","method":"test.ok"}\n`);
    await flush();
    expect(problems.map((problem) => problem.code)).toEqual(['protocol_error', 'protocol_error']);
    expect(problems[0]?.data).toMatchObject({ line: 'garbage' });
    expect(notes).toEqual(['test.ok']);
    await connection.close();
  });
});
