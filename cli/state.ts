import { existsSync } from 'node:fs';
import { OneWorksError, isOneWorksError } from '../core/errors.js';
import { assertFileBackend } from './fleet/backend.js';
import { createFileStore, ownerRecordOfThisProcess, type FileStore } from '../core/store/index.js';
import { recoverInterruptedRuns } from '../core/session/recover.js';
import type { CliContext } from './context.js';
import { socketPath } from './daemon/wire.js';

/**
 * Opens the state directory. Commands that run sessions own it (one owner at a time; a stale
 * owner whose pid is dead is recovered, and the recovery is reported) and must call
 * `store.releaseOwner()` when done; read-only commands don't take ownership. A command that only
 * reads and exits asks for `syncReads` (see FileStoreOptions).
 */
export async function openStore(ctx: CliContext, options: { own?: boolean; syncReads?: boolean } = { own: true }): Promise<FileStore> {
  assertFileBackend(ctx);
  const store = await createFileStore(ctx.stateDir, { syncReads: options.syncReads === true });
  if (options.own !== false) {
    const owner = await store.acquireOwner(ownerRecordOfThisProcess()).catch((error: unknown) => {
      // While `serve` owns the state directory, say how to reach it instead.
      if (isOneWorksError(error, 'state_locked') && existsSync(socketPath(ctx.stateDir))) {
        throw new OneWorksError(
          'state_locked',
          `${error.message}\nAn orchestrator (\`one-works serve\`) owns it: \`run\`, \`send\`, \`wait\` and \`cancel\` talk to it while it runs; stop it first for anything else.`,
          { data: error.data, cause: error },
        );
      }
      throw error;
    });
    if (owner.recovered) {
      ctx.out.info(
        `recovered the state directory from a stale owner (pid ${owner.previous?.pid ?? '?'} is gone or is another process now)`,
      );
      const changed = await recoverInterruptedRuns(store, { stateDir: ctx.stateDir });
      if (changed.length > 0) ctx.out.info(`sessions with an interrupted turn now need attention: ${changed.join(', ')}`);
    }
  }
  return store;
}

export { assertFileBackend } from './fleet/backend.js';
