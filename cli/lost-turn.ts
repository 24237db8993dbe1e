/**
 * What `run` says when its orchestrator went away (crashed, killed) while it ran the command's
 * turn: the command's own client (cli/commands/run-follow.ts) and the thin client of a `run`
 * handed to the orchestrator (cli/early-intent.ts, told the turn by `command.turn`) say the same.
 * No schema here: the early bundle loads it.
 */
export interface LostTurn {
  sessionId: string;
  runId: string;
  /** The orchestrator's pid, when known. */
  pid?: number | undefined;
}

/** What happened, and what to do: the lines of the error (its message). */
export function lostTurnLines({ sessionId, runId, pid }: LostTurn): string[] {
  const server = `the orchestrator${pid === undefined ? '' : ` (pid ${pid})`}`;
  return [
    `${server} stopped while it ran turn ${runId} of session ${sessionId}, so the turn's outcome is unknown: it may or may not have finished, and its tools may have changed the workspace.`,
    `What it did: \`one-works events ${sessionId}\`, and check the workspace.`,
    `The next command starts a new orchestrator, which records the run as unknown; say what happened with \`one-works sessions reconcile ${sessionId} ${runId} --status completed|failed|interrupted\` before sending more.`,
  ];
}
