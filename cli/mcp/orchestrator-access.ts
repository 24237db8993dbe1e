import { ERROR_CODES, isOneWorksError } from '../../core/errors.js';
import type { OrchestratorAccess } from './mcp-server.js';
import type { ToolOrchestrator } from './tool.js';

/** A connected orchestrator client that can be closed. */
export type ClosableOrchestrator = ToolOrchestrator & { close(): Promise<void> };

/** {@link OrchestratorAccess} over one shared connection, plus closing it. */
export interface SharedOrchestrator extends OrchestratorAccess {
  /** Closes the connection if one is open; later calls connect again. */
  close(): Promise<void>;
}

/**
 * Shares one orchestrator connection among all tool calls, connecting on the first call (so the
 * MCP handshake never waits for the orchestrator). Before a call runs on a connection made
 * earlier, the connection is checked with a side-effect-free `info()` round trip: when that
 * fails with `connection_closed` (the orchestrator exited or restarted since), the connection is
 * dropped and a new one made (starting a server when `connect` auto-starts one), so the first
 * call after a restart does not fail. A call that was sent is never retried, whatever happened
 * to it: a create without a request key must not run twice; a connection it finds closed is
 * dropped so that the next call connects again.
 */
export function createSharedOrchestrator(connect: () => Promise<ClosableOrchestrator>): SharedOrchestrator {
  let current: Promise<ClosableOrchestrator> | undefined;
  const drop = (dropped: Promise<ClosableOrchestrator>): void => {
    if (current !== dropped) return;
    current = undefined;
    void dropped.then((client) => client.close()).catch(() => undefined);
  };
  // The shared connection, made now when there is none; a failed connect is forgotten.
  const connected = async (): Promise<{ pending: Promise<ClosableOrchestrator>; client: ClosableOrchestrator; fresh: boolean }> => {
    const fresh = current === undefined;
    current ??= connect();
    const pending = current;
    try {
      return { pending, client: await pending, fresh };
    } catch (error) {
      if (current === pending) current = undefined;
      throw error;
    }
  };
  // A connection that is still open: an older one is probed first and replaced when closed.
  const usable = async (): Promise<{ pending: Promise<ClosableOrchestrator>; client: ClosableOrchestrator }> => {
    const shared = await connected();
    if (shared.fresh) return shared;
    try {
      await shared.client.info();
      return shared;
    } catch (error) {
      if (!isOneWorksError(error, ERROR_CODES.CONNECTION_CLOSED)) throw error;
      drop(shared.pending);
      return connected();
    }
  };
  return {
    async use(call) {
      const { pending, client } = await usable();
      try {
        return await call(client);
      } catch (error) {
        if (isOneWorksError(error, ERROR_CODES.CONNECTION_CLOSED)) drop(pending);
        throw error;
      }
    },
    async close() {
      const pending = current;
      current = undefined;
      if (pending) await pending.then((client) => client.close()).catch(() => undefined);
    },
  };
}
