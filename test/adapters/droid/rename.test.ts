import { afterEach, describe, expect, it } from 'vitest';
import { renameDroidSession } from '../../../adapters/droid/rename.js';
import type { Connection } from '../../../core/protocol/index.js';
import { Redactor } from '../../../core/redact.js';
import { createConnectionWithRawPeer, type RawPeer } from '../../support/linked-pair.js';

// droid.rename_session over a connection whose peer the test scripts: the request droid gets,
// success only on `{success:true}`, stable codes for every failure, secrets kept out.

const SECRET = 'sk-rename-secret-4242';
const connections: Connection[] = [];
afterEach(() => {
  for (const connection of connections.splice(0)) connection.close();
});

async function setup(): Promise<{ connection: Connection; peer: RawPeer; redactor: Redactor }> {
  const { connection, peer } = await createConnectionWithRawPeer();
  connections.push(connection);
  const redactor = new Redactor();
  redactor.register(SECRET);
  return { connection, peer, redactor };
}

const isRename = (frame: Record<string, unknown>) => frame.method === 'droid.rename_session';

describe('renameDroidSession', () => {
  it('sends droid.rename_session {title} and resolves on {success:true}', async () => {
    const { connection, peer, redactor } = await setup();
    const renamed = renameDroidSession(connection, 'My title', { redactor, timeoutMs: 5_000 });
    const request = await peer.waitFor(isRename);
    expect(request.params).toEqual({ title: 'My title' });
    await peer.transport.send({ jsonrpc: '2.0', id: request.id, result: { success: true } });
    await expect(renamed).resolves.toBeUndefined();
  });

  it('rejects with peer_error when droid answers without success', async () => {
    const { connection, peer, redactor } = await setup();
    const renamed = renameDroidSession(connection, 'My title', { redactor, timeoutMs: 5_000 });
    const request = await peer.waitFor(isRename);
    await peer.transport.send({ jsonrpc: '2.0', id: request.id, result: { success: false } });
    await expect(renamed).rejects.toMatchObject({ name: 'OneWorksError', code: 'peer_error', data: { success: false } });
  });

  it('rejects with peer_error and a redacted message when droid answers with an error', async () => {
    const { connection, peer, redactor } = await setup();
    const renamed = renameDroidSession(connection, 'My title', { redactor, timeoutMs: 5_000 });
    const request = await peer.waitFor(isRename);
    await peer.transport.send({ jsonrpc: '2.0', id: request.id, error: { code: -32603, message: `upstream refused key ${SECRET}` } });
    const error = await renamed.then(
      () => undefined,
      (e: unknown) => e as Error & { code: string },
    );
    expect(error).toMatchObject({ code: 'peer_error' });
    expect(error?.message).toContain('droid did not rename its session');
    expect(error?.message).toContain('[REDACTED]');
    expect(error?.message).not.toContain(SECRET);
  });

  it('rejects with request_timeout when droid never answers', async () => {
    const { connection, peer, redactor } = await setup();
    const renamed = renameDroidSession(connection, 'My title', { redactor, timeoutMs: 20 });
    await peer.waitFor(isRename);
    await expect(renamed).rejects.toMatchObject({ code: 'request_timeout' });
  });

  it('rejects with request_cancelled when its signal aborts', async () => {
    const { connection, peer, redactor } = await setup();
    const controller = new AbortController();
    const renamed = renameDroidSession(connection, 'My title', { redactor, timeoutMs: 5_000, signal: controller.signal });
    await peer.waitFor(isRename);
    controller.abort();
    await expect(renamed).rejects.toMatchObject({ code: 'request_cancelled' });
  });

  it('rejects with connection_closed, sending nothing, when no droid runs or its connection closed', async () => {
    const { connection, peer, redactor } = await setup();
    await expect(renameDroidSession(undefined, 'My title', { redactor, timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'connection_closed',
      message: expect.stringContaining('no droid process is running'),
    });
    connection.close();
    await expect(renameDroidSession(connection, 'My title', { redactor, timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'connection_closed',
    });
    expect(peer.received.filter((frame) => isRename(frame as Record<string, unknown>))).toEqual([]);
  });
});
