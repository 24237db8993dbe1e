import { join } from 'node:path';

/**
 * `<state>/orchestrator.sock`: the control socket of the state directory's server. A module of its
 * own (wire.ts re-exports it) so that `run`'s early intent (cli/early-intent.ts) finds the socket
 * without loading the wire's schemas.
 */
export const socketPath = (stateDir: string): string => join(stateDir, 'orchestrator.sock');

/** `<state>/orchestrator.log`: stdout and stderr of an auto-started server (wire.ts re-exports it). */
export const logPath = (stateDir: string): string => join(stateDir, 'orchestrator.log');
