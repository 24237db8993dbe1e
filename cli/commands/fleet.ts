import type { Command } from 'commander';
import { createContext } from '../context.js';
import { assertFleet } from '../fleet/backend.js';
import type { FleetStatus } from '../../core/fleet/fleet-queue.js';
import { openFleet } from '../fleet/open-fleet.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

/**
 * `one-works fleet` (state.backend postgres): the fleet's workers (name, host, pid, whether its
 * lease is live and until when, live runs of its maxConcurrentRuns, approved roots), the queue's
 * depth, and the sessions whose next turn waits for a lost worker (`worker_lost`). Read-only.
 */
export function registerFleetCommand(program: Command, run: (body: CommandBody) => Promise<void>): void {
  program
    .command('fleet')
    .description('the fleet of `serve --worker` processes (state.backend postgres): workers, leases, load, queue depth')
    .action((_flags: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>(), process.env, { adapters: false });
        assertFleet(ctx, 'fleet');
        const fleet = await openFleet(ctx);
        try {
          const status = await fleet.client.fleetStatus();
          ctx.out.result({ database: fleet.store.where, ...status }, () => fleetText(fleet.store.where, status));
          return EXIT.ok;
        } finally {
          await fleet.close();
        }
      }),
    );
}

function fleetText(where: string, status: FleetStatus): string {
  const lines = [`fleet on ${where}`];
  if (status.workers.length === 0) lines.push('  no workers yet: start one with `one-works serve --worker NAME`');
  for (const w of status.workers) {
    const lease = w.alive ? `alive, lease until ${w.leaseExpiresAt}` : `LOST, lease expired ${w.leaseExpiresAt}`;
    const roots = w.approvedRoots.length > 0 ? w.approvedRoots.join(', ') : '(no approved roots)';
    lines.push(`  ${w.name.padEnd(12)}  ${w.host} pid ${w.pid}  ${lease}  runs ${w.live}/${w.maxConcurrentRuns}  roots ${roots}`);
  }
  lines.push(`queue: ${status.queue.queued} queued, ${status.queue.claimed} running`);
  for (const waiting of status.waitingOnLostWorkers) {
    lines.push(`  ${waiting.sessionId}  worker_lost: request ${waiting.requestId} waits for worker ${waiting.worker}`);
  }
  return lines.join('\n');
}
