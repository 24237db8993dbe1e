import { hostname } from 'node:os';
import { isOneWorksError } from '../../core/errors.js';
import { createOrchestrator } from '../../core/orchestrator/index.js';
import { createFileStore } from '../../core/store/index.js';
import type { CliContext } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { claimShutdown } from '../shutdown.js';
import { serverDeps } from './deps.js';
import { EscalationRouter } from './escalations.js';
import { environmentFingerprint } from './fingerprint.js';
import { startOrchestratorServer } from './server.js';
import { socketPath } from './wire.js';

export interface ServeOptions {
  /** Started by a client (`serve --auto`): losing the owner lock exits quietly, and the idle exit applies. */
  auto: boolean;
  /** Idle exit in ms; default `orchestrator.idleExitMs` when `auto`, none otherwise. */
  idleExitMs?: number | undefined;
}

/**
 * The body of `one-works serve`: owns the state directory (a second server is refused with
 * `state_locked`; an auto-started one that loses the race exits 0 quietly, the client then
 * reaches the winner), starts the orchestrator (which recovers what a dead owner left), listens
 * on `<state>/orchestrator.sock` and runs until SIGTERM/SIGINT or the idle exit. Then it shuts
 * the orchestrator down (turns cancelled, children stopped), closes the socket, releases the
 * owner lock and returns 0.
 */
export async function runServe(ctx: CliContext, options: ServeOptions): Promise<number> {
  const { out } = ctx;
  const store = await createFileStore(ctx.stateDir);
  try {
    const claim = await store.acquireOwner({ pid: process.pid, host: hostname(), startedAt: new Date().toISOString() });
    if (claim.recovered) out.info(`recovered the state directory from a stale owner (pid ${claim.previous?.pid ?? '?'} is gone)`);
  } catch (error) {
    if (options.auto && isOneWorksError(error, 'state_locked')) {
      out.info('another orchestrator owns this state directory; leaving it to that one');
      return EXIT.ok;
    }
    throw error;
  }
  const shutdown = claimShutdown();
  try {
    // A person at a client's terminal has as long as a turn may run to answer a permission ask.
    const escalations = new EscalationRouter({ timeoutMs: ctx.config.orchestrator.runTimeoutMs });
    const orchestrator = await createOrchestrator(serverDeps(ctx, store, out, escalations));
    const idleExitMs = options.idleExitMs ?? (options.auto ? ctx.config.orchestrator.idleExitMs : undefined);
    let onIdle: () => void = () => undefined;
    let onExitRequest: () => void = () => undefined;
    const idle = new Promise<string>((resolve) => {
      onIdle = () => resolve('idle');
      onExitRequest = () => resolve('a client with a different config or environment asked an idle server to exit');
    });
    const server = await startOrchestratorServer({
      orchestrator,
      socketPath: socketPath(ctx.stateDir),
      redact: (text) => out.redact(text),
      idleExitMs,
      onIdle,
      fingerprint: environmentFingerprint(ctx),
      auto: options.auto,
      onExitRequest,
      escalations,
    }).catch(async (error: unknown) => {
      await orchestrator.shutdown();
      throw error;
    });
    out.info(`orchestrator serving ${ctx.stateDir} on ${server.socketPath} (pid ${process.pid})`);
    const signalled = new Promise<string>((resolve) => {
      if (shutdown.signal.aborted) resolve('signal');
      shutdown.signal.addEventListener('abort', () => resolve(String(shutdown.signal.reason ?? 'signal')), { once: true });
    });
    const why = await Promise.race([idle, signalled]);
    out.info(`orchestrator stopping (${why === 'idle' ? `idle for ${idleExitMs} ms` : why})`);
    await orchestrator.shutdown();
    await server.close();
    return EXIT.ok;
  } finally {
    shutdown.release();
    await store.releaseOwner();
  }
}
