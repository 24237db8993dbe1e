import { hostname } from 'node:os';
import { createFileStore, type FileStore } from '../core/store/index.js';
import { recoverInterruptedRuns } from '../core/session/index.js';
import type { CliContext } from './context.js';

/**
 * Opens the state directory. Commands that run sessions own it (one owner at a time; a stale
 * owner whose pid is dead is recovered, and the recovery is reported) and must call
 * `store.releaseOwner()` when done; read-only commands don't take ownership.
 */
export async function openStore(ctx: CliContext, options: { own?: boolean } = { own: true }): Promise<FileStore> {
  const store = await createFileStore(ctx.stateDir);
  if (options.own !== false) {
    const owner = await store.acquireOwner({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() });
    if (owner.recovered) {
      ctx.out.info(`recovered the state directory from a stale owner (pid ${owner.previous?.pid ?? '?'} is gone)`);
      const changed = await recoverInterruptedRuns(store, { stateDir: ctx.stateDir });
      if (changed.length > 0) ctx.out.info(`sessions with an interrupted turn now need attention: ${changed.join(', ')}`);
    }
  }
  return store;
}
