import { killAllChildrenSync } from '../core/process/child-registry.js';
import { currentView } from './process-view.js';
import { EXIT } from './exit-codes.js';

/**
 * SIGINT/SIGTERM handling for the CLI. A command that has cleanup to do (a live turn to
 * interrupt and record) claims the shutdown signal; the first signal then aborts it and the
 * command settles normally (its record written, its children stopped). A second signal, or a
 * command that does not settle within `forceAfterMs`, kills every child and exits at once.
 * Without a claim, a signal kills the children and exits at once.
 */
const controller = new AbortController();
let claims = 0;
let installed = false;

export function installShutdownHandlers(forceAfterMs = 20_000): () => void {
  if (installed) return () => undefined;
  installed = true;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted || claims === 0) {
      killAllChildrenSync();
      process.exit(signal === 'SIGINT' || signal === 'SIGTERM' ? EXIT.interrupted : EXIT.internal);
    }
    controller.abort(signal);
    setTimeout(() => {
      killAllChildrenSync();
      process.exit(EXIT.interrupted);
    }, forceAfterMs).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return () => {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    installed = false;
  };
}

/** Claims the shutdown signal for the duration of a command; call the returned release when done. */
export function claimShutdown(): { signal: AbortSignal; release: () => void } {
  // A command the orchestrator runs for a client stops on that client's signal, not the server's.
  const view = currentView();
  if (view) return { signal: view.shutdown, release: () => undefined };
  claims++;
  let released = false;
  return {
    signal: controller.signal,
    release: () => {
      if (!released) claims--;
      released = true;
    },
  };
}
