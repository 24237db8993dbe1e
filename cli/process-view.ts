import { AsyncLocalStorage } from 'node:async_hooks';
import type { Readable, Writable } from 'node:stream';
import { PROCESS_STDERR, PROCESS_STDOUT, type TextSink } from './stdio.js';

/**
 * A command run by the orchestrator on behalf of a thin client (`run` delegated by cli/bin.cjs,
 * see cli/daemon/delegated-run.ts) sees the client's process, not the server's: its working
 * directory, environment, standard streams and shutdown signal. Code on that command's path asks
 * here instead of `process` (an AsyncLocalStorage, so that the server's own work, and other
 * clients' commands, keep seeing their own); outside such a command every answer is `process`'s.
 */
export interface ProcessView {
  cwd: string;
  env: NodeJS.ProcessEnv;
  stdin: Readable & { isTTY?: boolean };
  stdout: Writable & { isTTY?: boolean };
  stderr: Writable & { isTTY?: boolean };
  /**
   * The token of the intent the client told before it handed the command over (its agent starting):
   * the command adopts it on its own connection (`intent.adopt`) instead of telling one.
   */
  handedIntent?: string;
  /**
   * A rehearsal (daemon/delegated-run.ts rehearseDelegatedRun): the command goes as far as it
   * can without reaching any orchestrator, telling any intent or printing anything, so that its
   * code is compiled before a client's command needs it.
   */
  rehearsal?: boolean;
  /** Aborted when the client is told SIGINT or SIGTERM (the command's claimShutdown signal). */
  shutdown: AbortSignal;
  /**
   * Called once the command reached an orchestrator whose config and environment are its own
   * (the fingerprint matched): from then on it runs for real; before, whatever it did is
   * discarded when it ends (the client then runs the command itself).
   */
  matched(): void;
  /** Called once the command's turn is accepted (its session and run ids), for the client to name it if the orchestrator goes away. */
  turnAccepted?(turn: { sessionId: string; runId: string }): void;
}

const storage = new AsyncLocalStorage<ProcessView>();

/** Runs `body` as the command of `view` (see {@link ProcessView}). */
export function runInView<T>(view: ProcessView, body: () => Promise<T>): Promise<T> {
  return storage.run(view, body);
}

/** The view of the command being run on behalf of a client, or undefined (this process's own). */
export function currentView(): ProcessView | undefined {
  return storage.getStore();
}

/** The working directory of the command being run: its client's, or this process's. */
export function viewCwd(): string {
  return storage.getStore()?.cwd ?? process.cwd();
}

/** The environment of the command being run: its client's, or this process's. */
export function viewEnv(): NodeJS.ProcessEnv {
  return storage.getStore()?.env ?? process.env;
}

/**
 * The standard streams of the command being run: its client's, or this process's (stdout and
 * stderr as cli/stdio.ts's sinks, which make Node's streams only when needed; stdin made when read).
 */
export function viewStdio(): { stdin: ProcessView['stdin']; stdout: TextSink; stderr: TextSink } {
  return storage.getStore() ?? PROCESS_STDIO;
}

const PROCESS_STDIO = {
  get stdin(): ProcessView['stdin'] {
    return process.stdin;
  },
  stdout: PROCESS_STDOUT,
  stderr: PROCESS_STDERR,
};

/**
 * Thrown on a command's path when it cannot run for its client here (the orchestrator it reached
 * runs with another config or environment, or none could be reached without starting one): the
 * client then runs the command itself. Never shown to anyone.
 */
export class ViewDeclined extends Error {
  constructor(reason: string) {
    super(`the command cannot run for its client here: ${reason}`);
    this.name = 'ViewDeclined';
  }
}
