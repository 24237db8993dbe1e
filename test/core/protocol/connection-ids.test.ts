import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { OneWorksError } from '../../../core/errors.js';
import { createConnection } from '../../../core/protocol/connection.js';
import { createLinkedPair } from '../../../core/transport/in-memory.js';
import { createConnectedPair, createConnectionWithRawPeer, createTestEnvelope, flush } from '../../support/linked-pair.js';

const Echo = { method: 'test.echo', params: z.object({ text: z.string() }), result: z.object({ echoed: z.string() }) };

describe('JSON-RPC ids of either type', () => {
  it('sends numeric ids from 1 with idType number and matches numeric responses', async () => {
    const { connection, peer } = await createConnectionWithRawPeer({ connection: { idPrefix: '', idType: 'number' } });
    const first = connection.request(Echo, { text: 'a' });
    const second = connection.request(Echo, { text: 'b' });
    const sent = await peer.waitFor((frame) => frame.id === 2);
    expect(sent).toMatchObject({ id: 2, method: 'test.echo' });
    expect(peer.received.map((frame) => (frame as { id: unknown }).id)).toEqual([1, 2]);
    await peer.transport.send({ jsonrpc: '2.0', id: 2, result: { echoed: 'b' } });
    await peer.transport.send({ jsonrpc: '2.0', id: 1, result: { echoed: 'a' } });
    await expect(first).resolves.toEqual({ echoed: 'a' });
    await expect(second).resolves.toEqual({ echoed: 'b' });
  });

  it('treats the type as part of the id: "1" does not answer request 1', async () => {
    const { connection, peer, problems } = await createConnectionWithRawPeer({ connection: { idPrefix: '', idType: 'number' } });
    const pending = connection.requestRaw('test.typed', {}, { timeoutMs: 60_000 });
    await peer.waitFor((frame) => frame.id === 1);
    await peer.transport.send({ jsonrpc: '2.0', id: '1', result: 'wrong' });
    await flush();
    expect(problems.map((problem) => [problem.code, problem.data?.id])).toEqual([['protocol_error', '1']]);
    await peer.transport.send({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'typed' } });
    await expect(pending).rejects.toMatchObject({ code: 'peer_error', data: { method: 'test.typed', code: -32000 } });
  });

  it('answers an inbound request with its id unchanged: a number stays a number, a string a string', async () => {
    const { connection, peer } = await createConnectionWithRawPeer();
    const seen: unknown[] = [];
    connection.onRequest('peer.ask', (params, ctx) => {
      seen.push(ctx.id);
      return { echo: params };
    });
    await peer.transport.send({ jsonrpc: '2.0', id: 0, method: 'peer.ask', params: 'zero' });
    await peer.transport.send({ jsonrpc: '2.0', id: '0', method: 'peer.ask', params: 'string zero' });
    await peer.transport.send({ jsonrpc: '2.0', id: 5, method: 'peer.unknown', params: {} });
    const numeric = await peer.waitFor((frame) => frame.id === 0);
    const textual = await peer.waitFor((frame) => frame.id === '0');
    const unknown = await peer.waitFor((frame) => frame.id === 5);
    expect(numeric).toEqual({ jsonrpc: '2.0', id: 0, result: { echo: 'zero' } });
    expect(textual).toEqual({ jsonrpc: '2.0', id: '0', result: { echo: 'string zero' } });
    expect(unknown).toMatchObject({ id: 5, error: { code: -32601 } });
    expect(seen).toEqual([0, '0']);
  });

  it('joins two connections with numeric ids end to end, requests both ways', async () => {
    const { client, server } = await createConnectedPair({ client: { idPrefix: '', idType: 'number' } });
    const serverSeen: unknown[] = [];
    server.onRequest('test.echo', (params, ctx) => {
      serverSeen.push(ctx.id);
      return { echoed: (params as { text: string }).text };
    });
    client.onRequest('test.echo', (params) => ({ echoed: `client:${(params as { text: string }).text}` }));
    await expect(client.request(Echo, { text: 'x' })).resolves.toEqual({ echoed: 'x' });
    await expect(server.request(Echo, { text: 'y' })).resolves.toEqual({ echoed: 'client:y' });
    expect(serverSeen).toEqual([1]);
  });

  it('rejects a pending numeric request with its numeric id when the connection closes', async () => {
    const { connection } = await createConnectionWithRawPeer({ connection: { idPrefix: '', idType: 'number' } });
    const pending = connection.requestRaw('test.never', {});
    await connection.close();
    const error = (await pending.catch((caught: unknown) => caught)) as OneWorksError;
    expect(error.code).toBe('connection_closed');
    expect(error.data).toMatchObject({ id: 1, method: 'test.never' });
  });

  it('refuses an idPrefix together with numeric ids', () => {
    const [left] = createLinkedPair();
    expect(() => createConnection(left, createTestEnvelope(), { idPrefix: 'c', idType: 'number' })).toThrow(/numeric ids/);
  });
});
