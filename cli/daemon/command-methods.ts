// The methods of a command the orchestrator runs for a thin client (cli/daemon/delegated-run.ts),
// in a module of their own: the client side (cli/early-intent.ts) loads no schema.

/** Request: run a plain `run` command line for the client (params: CommandRunParamsSchema in wire.ts). */
export const COMMAND_RUN = 'command.run';
/** Request: the client got SIGINT or SIGTERM while its command runs. */
export const COMMAND_SIGNAL = 'command.signal';
/** Notification from the server: a piece of the command's output, `{ stream: 'stdout' | 'stderr', text }`. */
export const COMMAND_OUTPUT = 'command.output';
/** Notification from the server: the command reached a matching orchestrator and runs for real (it will not be declined). */
export const COMMAND_MATCHED = 'command.matched';
/** Notification from the server: the command's turn is accepted, `{ sessionId, runId, pid }` (pid: the server's). */
export const COMMAND_TURN = 'command.turn';
