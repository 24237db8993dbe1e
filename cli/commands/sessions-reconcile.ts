import { type Command, Option } from 'commander';
import { RECONCILED_STATUSES, reconcileInStore, type ReconcileRequest } from '../../core/session/reconcile.js';
import { recoverInterruptedRuns } from '../../core/session/recover.js';
import { createContext } from '../context.js';
import { socketPath } from '../daemon/wire.js';
import { EXIT } from '../exit-codes.js';
import { isFleet } from '../fleet/backend.js';
import { onFleet } from '../fleet/person-request.js';
import type { CommandBody, GlobalOptions } from '../main.js';
import { openStore } from '../state.js';

/**
 * `sessions reconcile SESSION RUN --status S [--note T]`: a person's verdict on a run whose
 * outcome is unknown, so that its session can continue. Through the running orchestrator when
 * there is one (it owns the record); otherwise directly on the store, after taking the state
 * directory's owner lock (refused while another process owns it) and recovering what a dead
 * owner left, as an orchestrator does at start. On a fleet (state.backend postgres), by the
 * worker holding the session, waited for. Either way a `run.reconciled` event is logged.
 */
export function registerReconcileCommand(sessions: Command, run: (body: CommandBody) => Promise<void>): void {
  sessions
    .command('reconcile')
    .description('record what really happened in a run whose outcome is unknown, so that its session can continue')
    .argument('<session>', 'session id')
    .argument('<run>', 'run id (see `one-works sessions show SESSION`)')
    .addOption(
      new Option('-s, --status <status>', 'what happened: the turn completed, failed, or was interrupted')
        .choices([...RECONCILED_STATUSES])
        .makeOptionMandatory(),
    )
    .option('-n, --note <text>', 'why, in your words (kept in the run.reconciled event)')
    .action((sessionId: string, runId: string, flags: { status: ReconcileRequest['status']; note?: string }, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false });
        const request: ReconcileRequest = { sessionId, runId, status: flags.status, ...(flags.note ? { note: flags.note } : {}) };
        let state: string;
        const client = isFleet(ctx) ? undefined : await (await import('../daemon/client.js')).tryConnect(socketPath(ctx.stateDir));
        if (isFleet(ctx)) {
          state = (await onFleet(ctx, (fleet) => fleet.reconcileRun(request))).state;
        } else if (client) {
          try {
            state = (await client.reconcileRun(request)).state;
          } finally {
            await client.close();
          }
        } else {
          const store = await openStore(ctx, { own: true });
          try {
            await recoverInterruptedRuns(store, { stateDir: ctx.stateDir });
            state = (await reconcileInStore(store, request)).status;
          } finally {
            await store.releaseOwner();
          }
        }
        ctx.out.result({ sessionId, runId, status: flags.status, sessionState: state }, () =>
          [
            `session ${sessionId}: run ${runId} reconciled as ${flags.status}; the session is ${state === 'needs_attention' ? 'still in need of attention (see `one-works sessions show`)' : state}`,
            ...(state === 'needs_attention' ? [] : [`  continue: one-works send ${sessionId} "…"`]),
          ].join('\n'),
        );
        return EXIT.ok;
      }),
    );
}
