import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { stat } from 'node:fs/promises';
import type { ChildExit, StopReason } from '../adapter.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { Redactor } from '../redact.js';
import { DEFAULT_STDERR_TAIL_BYTES } from './byte-tail.js';
import { ChildSupervisor, type ChildHandle, type ProcessLogger } from './child-supervisor.js';

/** Default bound on waiting for stdout/stderr to close after the child exited. */
export const DEFAULT_DRAIN_FALLBACK_MS = 3000;

export interface SpawnChildOptions {
  /** The binary (absolute path, or a name resolved on `env.PATH`). Never run through a shell. */
  command: string;
  args: readonly string[];
  /** Working directory, set explicitly. */
  cwd: string;
  /** The child's complete environment (see `buildChildEnv`); `process.env` is never merged in. */
  env: Readonly<Record<string, string>>;
  /** Bound of the stderr tail, in bytes (default 64 KiB). */
  stderrTailBytes?: number;
  /** How long `exited` waits for stdout/stderr to close after the process exited, in ms (default 3000). */
  drainFallbackMs?: number;
  /** Redacts the stderr tail and logged stderr. */
  redactor?: Redactor;
  logger?: ProcessLogger;
}

/**
 * Starts a long-lived child: argv array, no shell, the given env only, stdin/stdout as pipes for
 * the protocol, stderr into a bounded tail. On POSIX the child is detached so it leads its own
 * process group, which `stop` and `killAllChildrenSync` signal as a whole.
 *
 * Resolves once the child has spawned. Rejects with OneWorksError `spawn_failed` (naming the
 * command, with the Node error as `cause`) when it cannot be started (ENOENT, EACCES, a missing
 * cwd); no child is left behind then. The caller owns the returned handle: it reads `stdout`
 * (unread output applies backpressure to the child) and eventually calls `stop`.
 */
export async function spawnChild(options: SpawnChildOptions): Promise<ChildHandle> {
  // Plain child_process: execa's per-spawn set-up cost tens of ms under load, on the path of
  // every agent start, and nothing of it is used here (no buffering, no result, and its exit
  // cleanup skips detached children, which the child registry covers: killAllChildrenSync).
  let subprocess: ChildProcess;
  try {
    subprocess = spawn(options.command, [...options.args], childSpawnOptions(options.cwd, options.env));
  } catch (error) {
    // Arguments Node refuses before any process exists (e.g. a NUL byte): nothing to clean up.
    throw await spawnFailed(options, error);
  }
  // Listeners go on synchronously, before the first tick, so no early output or exit is missed.
  const supervisor = supervise(subprocess, options);
  try {
    await waitForSpawn(subprocess);
  } catch (error) {
    supervisor.abandon();
    throw await spawnFailed(options, error);
  }
  return supervisor.start();
}

/**
 * How a long-lived child is spawned: its own process group on POSIX, pipes for stdin, stdout and
 * stderr, no shell, exactly `env`. A child launched ahead (core/session/launch-ahead.ts) is spawned
 * with these too, so that the child adopted is one spawnChild would have made.
 */
export function childSpawnOptions(cwd: string, env: Readonly<Record<string, string>>): SpawnOptions {
  return { cwd, env: { ...env }, shell: false, detached: process.platform !== 'win32', stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true };
}

/**
 * {@link spawnChild} for a child already spawned with the same options (a launch ahead,
 * core/session/launch-ahead.ts, whose stdout nobody has read yet): supervised from now on, as
 * spawnChild's own.
 */
export function adoptChild(subprocess: ChildProcess, options: SupervisionOptions): ChildHandle {
  return supervise(subprocess, options).start();
}

type SupervisionOptions = Omit<SpawnChildOptions, 'command' | 'args' | 'cwd' | 'env'>;

function supervise(subprocess: ChildProcess, options: SupervisionOptions): ChildSupervisor {
  return new ChildSupervisor(subprocess, {
    stderrTailBytes: options.stderrTailBytes ?? DEFAULT_STDERR_TAIL_BYTES,
    drainFallbackMs: options.drainFallbackMs ?? DEFAULT_DRAIN_FALLBACK_MS,
    redactor: options.redactor,
    logger: options.logger,
  });
}

// Resolves on 'spawn'; rejects on 'error' (a missing binary or cwd, a file that cannot run).
function waitForSpawn(subprocess: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    subprocess.once('spawn', resolve);
    subprocess.once('error', reject);
  });
}

// Builds the spawn_failed error; on ENOENT it tells a missing binary from a missing cwd.
async function spawnFailed(options: SpawnChildOptions, cause: unknown): Promise<OneWorksError> {
  const errno = (cause as NodeJS.ErrnoException | undefined)?.code;
  let detail = errno ?? (cause instanceof Error ? cause.message : String(cause));
  if (errno === 'ENOENT') {
    const cwdExists = await stat(options.cwd).then(
      (s) => s.isDirectory(),
      () => false,
    );
    detail = cwdExists
      ? 'ENOENT: the binary does not exist (or is not on PATH)'
      : `ENOENT: the working directory ${options.cwd} does not exist`;
  } else if (errno === 'EACCES') {
    detail = 'EACCES: the binary is not executable by this user';
  }
  return new OneWorksError(ERROR_CODES.SPAWN_FAILED, `could not start ${options.command}: ${detail}`, {
    data: { command: options.command, cwd: options.cwd, errno },
    cause,
  });
}

export type { ChildExit, StopReason };
