import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import type { CliContext } from '../context.js';

/** True when the config puts the state in PostgreSQL: the session commands then talk to the fleet. */
export function isFleet(ctx: Pick<CliContext, 'config'>): boolean {
  return ctx.config.state.backend === 'postgres';
}

/**
 * Throws `usage` unless the state backend is `file`: with `postgres` (a fleet), records live in
 * the database and sessions run on the fleet's workers, so a command that needs the local state
 * directory or a local orchestrator has nothing to work on (silently using the state directory
 * would split a user's sessions between two places). The fleet's own commands go through
 * cli/fleet/ instead.
 */
export function assertFileBackend(ctx: Pick<CliContext, 'config'>): void {
  if (ctx.config.state.backend === 'file') return;
  throw new OneWorksError(
    ERROR_CODES.USAGE,
    `this command is not available with state.backend ${ctx.config.state.backend} (a fleet): the fleet commands are run, send, submit, send-queued, sessions, events, wait, cancel, mcp and fleet, and \`serve --worker\` runs a worker; use state.backend: file for the others`,
    { data: { backend: ctx.config.state.backend } },
  );
}

/** Throws `usage` unless the state backend is `postgres`: `what` (e.g. `fleet`) needs a fleet. */
export function assertFleet(ctx: Pick<CliContext, 'config'>, what: string): void {
  if (isFleet(ctx)) return;
  throw new OneWorksError(
    ERROR_CODES.USAGE,
    `${what} needs a fleet: set state.backend: postgres and state.postgres.url in one-works.yaml (see the README's Fleet section)`,
    { data: { backend: ctx.config.state.backend } },
  );
}
