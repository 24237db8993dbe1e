import { OneWorksError } from '../../core/errors.js';
import type { PostgresStore } from '../../core/store/index.js';
import type { CliContext } from '../context.js';
import type { FleetClient } from './fleet-client.js';

/** A fleet client and the store it reads; `close` ends both (the store's connections included). */
export interface OpenFleet {
  client: FleetClient;
  store: PostgresStore;
  close(): Promise<void>;
}

/**
 * Opens the fleet's database (state.postgres.url; its schema migrated, or refused when newer
 * than this code) and a {@link FleetClient} on it. No local orchestrator is started or reached.
 * The URL is a secret: the store's messages name only `host:port/database`.
 */
export async function openFleet(ctx: Pick<CliContext, 'config' | 'defaultAdapter'>): Promise<OpenFleet> {
  const postgres = ctx.config.state.postgres;
  if (ctx.config.state.backend !== 'postgres' || !postgres) {
    throw new OneWorksError('config_invalid', 'state.backend is not postgres: there is no fleet to talk to');
  }
  // Loaded only here: the file backend's commands never load pg (nor the orchestrator's read helpers).
  const [{ createPostgresStore }, queue, { FleetClient }] = await Promise.all([
    import('../../core/store/postgres-store.js'),
    import('../../core/fleet/fleet-queue.js'),
    import('./fleet-client.js'),
  ]);
  const store = await createPostgresStore({ url: postgres.url, poolSize: 6 });
  const { maxQueuedTotal, maxQueuedPerSession, runTimeoutMs, cancelGraceMs, fleetMaxConcurrentRuns } = ctx.config.orchestrator;
  const client = new FleetClient(store, queue, {
    defaultAdapter: ctx.defaultAdapter,
    limits: { maxQueuedTotal, maxQueuedPerSession, runTimeoutMs, cancelGraceMs, fleetMaxConcurrentRuns },
  });
  return {
    client,
    store,
    close: async () => {
      await client.close();
      await store.close();
    },
  };
}
