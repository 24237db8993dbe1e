import { realpath } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { isOneWorksError, OneWorksError } from '../../core/errors.js';
import { abandonPreviousClaims, homedSessions, lostSessions, setApprovedRoots } from '../../core/fleet/fleet-queue.js';
import { FleetWorker } from '../../core/fleet/fleet-worker.js';
import { createOrchestrator, type Orchestrator } from '../../core/orchestrator/index.js';
import { AskBoard } from '../../core/permissions/index.js';
import { sweepProcessesByEnvSync } from '../../core/process/sweep.js';
import { sessionDir } from '../../core/store/index.js';
import { WorkerLease } from '../../core/store/postgres-queue.js';
import { createPostgresStore, type PostgresStore } from '../../core/store/postgres-store.js';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { claimShutdown } from '../shutdown.js';
import { serverDeps } from './deps.js';
import { EscalationRouter } from './escalations.js';

// How long the worker's store retries while the database is unreachable (a restart).
const RETRY_UNAVAILABLE_MS = 120_000;
// Connections of a worker's pool: the orchestrator's writes, claims, heartbeats.
const WORKER_POOL_SIZE = 8;
const WORKER_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/**
 * The body of `one-works serve --worker NAME`: one worker of a fleet on the PostgreSQL state
 * backend. It registers its lease (refused with `state_locked` while a live process holds the
 * name), records its approved roots, marks what its previous process left claimed `unknown`,
 * starts an orchestrator over the database whose start-up recovery touches only the sessions
 * whose HOME it holds (no single-owner lock: the lease is its claim), and runs the dispatch
 * loop (core/fleet/fleet-worker.ts) until SIGTERM/SIGINT. Then it stops claiming, shuts the
 * orchestrator down (live turns are cancelled and recorded), finishes their requests and
 * releases its lease. A lost lease stops it with `worker_lease_lost`.
 */
export async function runWorker(ctx: CliContext, name: string): Promise<number> {
  const { out, config } = ctx;
  if (!WORKER_NAME.test(name)) {
    throw new OneWorksError('usage', `--worker: a name of letters, digits, '.', '_' and '-' (at most 63), not ${JSON.stringify(name)}`);
  }
  if (config.state.backend !== 'postgres' || !config.state.postgres) {
    throw new OneWorksError(
      'config_invalid',
      'serve --worker runs a worker of a fleet, whose state is in PostgreSQL: set state.backend: postgres and state.postgres.url (plain `one-works serve` runs on the state directory)',
      { data: { backend: config.state.backend } },
    );
  }
  const store = await createPostgresStore({
    url: config.state.postgres.url,
    stateDir: ctx.stateDir,
    poolSize: WORKER_POOL_SIZE,
    retryUnavailableMs: RETRY_UNAVAILABLE_MS,
    onConnectionError: (message) => out.info(`worker ${name}: a database connection failed (${message}); reconnecting`),
  });
  const leaseMs = config.orchestrator.workerLeaseMs;
  const shutdown = claimShutdown();
  let orchestrator: Orchestrator | undefined;
  let lease: WorkerLease | undefined;
  let lost: unknown;
  try {
    lease = await registerLease(store, name, config.orchestrator.maxConcurrentRuns, leaseMs, (message) => out.info(message));
    await setApprovedRoots(store, name, await Promise.all(ctx.approvedRoots.map((root) => realpath(root).catch(() => root))));
    const abandoned = await abandonPreviousClaims(store, name);
    if (abandoned.length > 0) {
      out.info(
        `worker ${name}: its previous process held ${abandoned.map((r) => `request ${r.id} (session ${r.sessionId})`).join(', ')}: recorded unknown, never run again`,
      );
    }
    // What a lost process of this worker left running (agents outlive a SIGKILLed parent) goes
    // first: recovery cannot find these sessions by their records, which expiry already settled.
    for (const sessionId of await lostSessions(store, name)) {
      const killed = sweepProcessesByEnvSync('HOME', join(sessionDir(ctx.stateDir, sessionId), 'home'));
      if (killed > 0) out.info(`worker ${name}: stopped ${killed} process(es) its previous process left running for session ${sessionId}`);
    }
    const asks = new AskBoard();
    const escalations = new EscalationRouter({
      board: asks,
      askTimeoutMs: config.orchestrator.askTimeoutMs,
      terminalTimeoutMs: config.orchestrator.runTimeoutMs,
    });
    orchestrator = await createOrchestrator({
      ...serverDeps(ctx, store, out, escalations),
      asks,
      recoveryScope: await homedSessions(store, name),
    });
    let onLost: () => void = () => undefined;
    const leaseLost = new Promise<string>((resolve) => {
      onLost = () => resolve('its lease was lost');
    });
    const worker = new FleetWorker({
      store,
      orchestrator,
      lease,
      fleetMaxConcurrentRuns: config.orchestrator.fleetMaxConcurrentRuns,
      sharedHomes: config.state.sharedHomes === true,
      leaseMs,
      log: (message) => out.info(message),
      onLeaseLost: (error) => {
        lost = error;
        onLost();
      },
    });
    worker.start();
    out.info(`worker ${name} serving the fleet on ${store.where} (pid ${process.pid}, ${config.orchestrator.maxConcurrentRuns} at once)`);
    const signalled = new Promise<string>((resolve) => {
      if (shutdown.signal.aborted) resolve('signal');
      shutdown.signal.addEventListener('abort', () => resolve(String(shutdown.signal.reason ?? 'signal')), { once: true });
    });
    const why = await Promise.race([signalled, leaseLost]);
    out.info(`worker ${name} stopping (${why}): live turns are cancelled and recorded`);
    // No new claim; then the orchestrator: its live turns end (cancelled) and the worker finishes their requests.
    await worker.stopClaiming();
    await orchestrator.shutdown();
    await worker.stop();
    orchestrator = undefined;
    if (lost !== undefined) throw lost;
    await lease.release().catch((error: unknown) => out.info(`worker ${name}: releasing its lease failed: ${String(error)}`));
    lease = undefined;
    return EXIT.ok;
  } finally {
    shutdown.release();
    // Failed before it served (or while stopping): the name is free again at once.
    await lease?.release().catch(() => undefined);
    await orchestrator?.shutdown().catch(() => undefined);
    await store.close();
  }
}

/**
 * Registers the worker's lease. A live lease held by a process of this host that is gone (this
 * worker, crashed a moment ago and restarted by its supervisor) is waited out, at most one
 * lease; one held by a live process, or by another host, is refused at once (`state_locked`).
 */
async function registerLease(
  store: PostgresStore,
  name: string,
  maxConcurrentRuns: number,
  leaseMs: number,
  log: (message: string) => void,
): Promise<WorkerLease> {
  const deadline = Date.now() + leaseMs + 2000;
  let said = false;
  for (;;) {
    try {
      return await WorkerLease.register(store, { name, host: hostname(), pid: process.pid, maxConcurrentRuns, leaseMs });
    } catch (error) {
      if (!isOneWorksError(error, 'state_locked') || Date.now() >= deadline) throw error;
      const { rows } = await store.withClient((client) =>
        client.query<{ host: string; pid: number }>('SELECT host, pid FROM workers WHERE name = $1', [name]),
      );
      const holder = rows[0];
      if (!holder || holder.host !== hostname() || processAlive(holder.pid)) throw error;
      if (!said) log(`worker ${name}: waiting for the lease of its previous process (pid ${holder.pid}, gone) to expire`);
      said = true;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
