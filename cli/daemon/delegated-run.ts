import { Readable, Writable } from 'node:stream';
import type { z } from 'zod';
import { type ProcessView, runInView, ViewDeclined } from '../process-view.js';
import { definedEnv, scanRunArgs } from '../early-intent.js';
import type { CommandRunParamsSchema } from './wire.js';

/** What `command.run` answers: the command's exit code, or why it did not run here (nothing was printed). */
export type DelegatedRunResult = { exitCode: number } | { declined: string };

type Stream = 'stdout' | 'stderr';

/**
 * Runs a plain `run` command line for a thin client (cli/bin.cjs, through cli/early-intent.ts):
 * the command's own code (`main`), in this process, with the client's working directory,
 * environment and streams (cli/process-view.ts). A `run` so pays neither the load of the
 * command's 2 MB nor its config's parse in a process of its own, whose CPU would be taken from
 * the agent starting meanwhile on a small machine.
 *
 * The command connects to this very server like any client and runs only when the server's
 * fingerprint is its own (same config and environment); until then its output is held back, and
 * when it does not match, or it reached no orchestrator, or failed before, the answer is
 * `declined` with nothing printed: the client then runs the command itself, as it would have, with
 * its own errors and restarts. Its output goes to `send` in order; `signal` aborts the command as
 * a first SIGINT would (the command cancels its turn and settles).
 */
export async function runDelegated(
  params: z.infer<typeof CommandRunParamsSchema> & { handedIntent?: string; rehearsal?: boolean },
  send: (stream: Stream, text: string) => void,
  signal: AbortSignal,
  onMatched: () => void = () => undefined,
  clientGone: () => boolean = () => false,
  onTurn: (turn: { sessionId: string; runId: string }) => void = () => undefined,
): Promise<DelegatedRunResult> {
  if (!scanRunArgs(params.args)) return { declined: 'not a plain run command line' };
  let matched = false;
  const held: Array<[Stream, string]> = [];
  const write = (stream: Stream, text: string): void => {
    if (matched) send(stream, text);
    else held.push([stream, text]);
  };
  const view: ProcessView = {
    cwd: params.cwd,
    env: params.env,
    // A command run for a client reads nothing from its terminal (the client delegates only when it has no prompts to show).
    stdin: Object.assign(Readable.from([]), { isTTY: false }),
    stdout: clientStream('stdout', params.stdout, write),
    stderr: clientStream('stderr', params.stderr, write),
    shutdown: signal,
    ...(params.handedIntent ? { handedIntent: params.handedIntent } : {}),
    ...(params.rehearsal ? { rehearsal: true } : {}),
    turnAccepted: (turn) => onTurn(turn),
    matched: () => {
      // A client that went away before (e.g. on Ctrl-C) gets nothing started for it.
      if (clientGone()) throw new ViewDeclined('its client went away');
      matched = true;
      onMatched();
      for (const [stream, text] of held.splice(0)) send(stream, text);
    },
  };
  const { main } = await import('../main.js');
  let exitCode: number;
  try {
    exitCode = await runInView(view, () => main([...params.args]));
  } catch (error) {
    if (error instanceof ViewDeclined) return { declined: error.message };
    throw error;
  }
  // It failed before it reached an orchestrator (its config, its checks): the client runs it and says so itself.
  if (!matched) return { declined: 'the command ended before it reached a matching orchestrator' };
  return { exitCode };
}

// A writable for one of the client's streams, as the command's code sees a terminal or a pipe.
function clientStream(
  stream: Stream,
  facts: { isTTY: boolean; columns?: number | undefined },
  write: (stream: Stream, text: string) => void,
): Writable & { isTTY: boolean; columns?: number } {
  const writable = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      write(stream, typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
      done();
    },
  });
  return Object.assign(writable, { isTTY: facts.isTTY, ...(facts.columns ? { columns: facts.columns } : {}) });
}

/**
 * Runs a `run` of `workspace` as a rehearsal in this server's idle time (see ProcessView.rehearsal):
 * its config load, checks and fingerprint, with nothing printed, no agent started and no
 * orchestrator reached. The code of a command run for a client is compiled on its first use (the
 * server's code cache holds what its own start ran): without this, the first `run` a server took
 * over would spend some 50 ms more of the server's CPU, while its agent starts. Never rejects.
 */
export async function rehearseDelegatedRun(configPath: string | undefined, workspace: string): Promise<void> {
  await runDelegated(
    {
      args: [...(configPath ? ['--config', configPath] : []), 'run', '--workspace', workspace, 'rehearsal'],
      cwd: process.cwd(),
      env: definedEnv(process.env),
      stdout: { isTTY: false },
      stderr: { isTTY: false },
      rehearsal: true,
    },
    () => undefined,
    new AbortController().signal,
  ).catch(() => undefined);
}
