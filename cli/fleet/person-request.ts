import type { SessionSummary } from '../../core/orchestrator/index.js';
import type { CliContext } from '../context.js';
import type { FleetClient } from './fleet-client.js';
import { openFleet } from './open-fleet.js';

/**
 * Runs a person's request on a fleet session (`sessions reconcile`, `sessions resolve`): the
 * worker holding the session does it, so this waits for that worker, and says so on stderr
 * after a while (naming the worker when it was lost: it must be restarted).
 */
export async function onFleet(
  ctx: Pick<CliContext, 'config' | 'defaultAdapter' | 'out'>,
  body: (client: FleetClient) => Promise<SessionSummary>,
): Promise<SessionSummary> {
  const fleet = await openFleet(ctx);
  try {
    fleet.client.onWaiting = (id) => {
      fleet.client.status(id).then(
        (summary) =>
          ctx.out.info(
            summary.fleet?.state === 'worker_lost' && summary.fleet.worker !== undefined
              ? `session ${id}: waiting for worker ${summary.fleet.worker}, which holds it and was lost; this is done once it is back (\`one-works serve --worker ${summary.fleet.worker}\`)`
              : `session ${id}: waiting for the worker that holds it (\`one-works fleet\` shows the workers and the queue)`,
          ),
        () => undefined,
      );
    };
    return await body(fleet.client);
  } finally {
    await fleet.close();
  }
}
