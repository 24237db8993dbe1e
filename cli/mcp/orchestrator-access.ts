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
 * MCP handshake never waits for the orchestrator). When a call fails with `connection_closed`
 * (the server went away), the connection is dropped and the next call connects again, which
 * starts a server when `connect` auto-starts one. A failed call is never retried here: a
 * create without a request key must not run twice.
 */
export function createSharedOrchestrator(connect: () => Promise<ClosableOrchestrator>): SharedOrchestrator {
  let current: Promise<ClosableOrchestrator> | undefined;
  const drop = (dropped: Promise<ClosableOrchestrator>): void => {
    if (current !== dropped) return;
    current = undefined;
    void dropped.then((client) => client.close()).catch(() => undefined);
  };
  return {
    async use(call) {
      const pending = (current ??= connect());
      let client: ClosableOrchestrator;
      try {
        client = await pending;
      } catch (error) {
        if (current === pending) current = undefined;
        throw error;
      }
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
