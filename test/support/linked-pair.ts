import { setImmediate } from 'node:timers/promises';
import type { OneWorksError } from '../../core/errors.js';
import { createConnection, type Connection, type ConnectionOptions } from '../../core/protocol/connection.js';
import type { Envelope, Inbound } from '../../core/protocol/types.js';
import { createLinkedPair } from '../../core/transport/in-memory.js';
import type { Transport } from '../../core/transport/transport.js';

/** The method of the cancel notification the test envelope sends when asked to. */
export const TEST_CANCEL_METHOD = '$/cancelRequest';

/**
 * A trivial JSON-RPC 2.0 envelope for protocol tests. Ids may be strings or numbers (anything
 * else is invalid) and, with `{ cancel: true }`, it tells the peer about abandoned requests.
 */
export function createTestEnvelope(options: { cancel?: boolean } = {}): Envelope {
  const envelope: Envelope = {
    request: (id, method, params) => ({ jsonrpc: '2.0', id, method, params }),
    notification: (method, params) => ({ jsonrpc: '2.0', method, params }),
    response: (id, result) => ({ jsonrpc: '2.0', id, result }),
    errorResponse: (id, error) => ({ jsonrpc: '2.0', id, error }),
    classify,
  };
  if (options.cancel) envelope.cancelRequest = (id) => ({ jsonrpc: '2.0', method: TEST_CANCEL_METHOD, params: { id } });
  return envelope;
}

function classify(message: unknown): Inbound {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return { kind: 'invalid', reason: 'not an object' };
  const frame = message as Record<string, unknown>;
  const { id, method, params } = frame;
  if (id !== undefined && id !== null && typeof id !== 'string' && typeof id !== 'number') {
    return { kind: 'invalid', reason: 'id is neither a string nor a number' };
  }
  const hasId = typeof id === 'string' || typeof id === 'number';
  if (typeof method === 'string') return hasId ? { kind: 'request', id, method, params } : { kind: 'notification', method, params };
  if ('result' in frame && hasId) return { kind: 'response', id, result: frame.result };
  const error = frame.error as { code?: unknown; message?: unknown; data?: unknown } | undefined;
  if (typeof error === 'object' && error !== null && typeof error.code === 'number' && typeof error.message === 'string') {
    return { kind: 'error', id: id ?? null, error: { code: error.code, message: error.message, data: error.data } };
  }
  return { kind: 'invalid', reason: 'neither request, notification nor response' };
}

/** Two started connections joined by an in-memory pair. */
export async function createConnectedPair(
  options: { client?: ConnectionOptions; server?: ConnectionOptions; cancel?: boolean } = {},
): Promise<{ client: Connection; server: Connection }> {
  const [left, right] = createLinkedPair();
  const envelope = createTestEnvelope({ cancel: options.cancel ?? false });
  const client = createConnection(left, envelope, { idPrefix: 'c', ...options.client });
  const server = createConnection(right, envelope, { idPrefix: 's', ...options.server });
  await Promise.all([client.start(), server.start()]);
  return { client, server };
}

/** A raw peer: a started transport recording every frame it receives, for scripting replies by hand. */
export interface RawPeer {
  transport: Transport;
  received: unknown[];
  /** Resolves with the next received frame matching `predicate` (already received ones included). */
  waitFor(predicate: (frame: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

/** One started connection (client side) whose peer is scripted by the test, plus its problems. */
export async function createConnectionWithRawPeer(
  options: { connection?: ConnectionOptions; cancel?: boolean } = {},
): Promise<{ connection: Connection; peer: RawPeer; problems: OneWorksError[] }> {
  const [left, right] = createLinkedPair();
  const connection = createConnection(left, createTestEnvelope({ cancel: options.cancel ?? false }), {
    idPrefix: 'c',
    ...options.connection,
  });
  const problems: OneWorksError[] = [];
  connection.onProblem((problem) => problems.push(problem));
  const received: unknown[] = [];
  right.onmessage = (message) => received.push(message);
  await Promise.all([connection.start(), right.start()]);
  const waitFor = async (predicate: (frame: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> => {
    for (let round = 0; round < 1000; round += 1) {
      const found = received.find((frame) => predicate(frame as Record<string, unknown>));
      if (found !== undefined) return found as Record<string, unknown>;
      await setImmediate();
    }
    throw new Error(`the peer never received the expected frame; got ${JSON.stringify(received)}`);
  };
  return { connection, peer: { transport: right, received, waitFor }, problems };
}

/** Lets queued microtasks and I/O callbacks run (in-memory delivery is asynchronous). */
export async function flush(rounds = 3): Promise<void> {
  for (let i = 0; i < rounds; i += 1) await setImmediate();
}
