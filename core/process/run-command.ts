import { OneWorksError } from '../errors.js';
import { registerChild, signalGroup, unregisterChild } from './child-registry.js';

/** Options of one short-lived command (a `--version` probe, say). */
export interface RunCommandOptions {
  /** Working directory; defaults to the current one. */
  cwd?: string;
  /** The child's COMPLETE environment: nothing of `process.env` is inherited. */
  env: Readonly<Record<string, string>>;
  /**
   * Wall-clock limit; on expiry the child's whole process group gets SIGTERM, then SIGKILL after
   * a short grace, so children it left holding the output pipes cannot keep the call waiting.
   */
  timeoutMs: number;
  /** Cap on each of stdout and stderr (characters after UTF-8 decoding); past it the child is killed and the output truncated. */
  maxOutputBytes: number;
  /** Cancels the command (the child is killed the same way as on timeout). */
  signal?: AbortSignal;
}

/** What a finished command left behind. A non-zero exit is a result, not an error. */
export interface RunCommandResult {
  /** Exit code, or null when the child was ended by a signal. */
  exitCode: number | null;
  /** The signal that ended the child, if one did. */
  signal: string | null;
  /** Output with the final newline stripped. */
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** True when an output stream hit `maxOutputBytes`. */
  truncated: boolean;
}

// Grace between SIGTERM and SIGKILL to the group of a one-shot command that overstayed its timeout.
const FORCE_KILL_AFTER_MS = 1_000;
// After the SIGKILL, how long to wait for the output pipes to close before giving up on them
// (a descendant that left the process group may still hold one).
const PIPE_GIVE_UP_MS = 500;

const SPAWN_ERROR_CODES = new Set(['ENOENT', 'EACCES', 'ENOEXEC', 'EPERM', 'ENOTDIR']);

/**
 * Runs `file` with `args` once (no shell, stdin ignored) and collects its output.
 *
 * Resolves with the result for any exit, including non-zero codes, timeouts and signals.
 * Rejects with `spawn_failed` (naming `file`) when the child could not be started at all
 * (missing file, not executable, bad cwd). The caller owns interpreting the output.
 */
export async function runCommand(file: string, args: readonly string[], options: RunCommandOptions): Promise<RunCommandResult> {
  // Loaded on the first command, not with this module: execa and its ~150 modules are some 10 ms
  // of the start of every process that can run a command (the orchestrator, whose agents' launch
  // and worktrees import this) but most never do (no bwrap check, no git).
  const { execa } = await import('execa');
  const subprocess = execa(file, args, {
    cwd: options.cwd,
    env: { ...options.env },
    extendEnv: false,
    shell: false,
    reject: false,
    stdin: 'ignore',
    // Its own process group, so the deadline ends everything it started (execa's timeout would
    // signal the child alone and then wait for the pipes its children hold).
    detached: process.platform !== 'win32',
    maxBuffer: options.maxOutputBytes,
    windowsHide: true,
  });
  const pid = subprocess.pid;
  if (pid !== undefined) registerChild(pid);
  let timedOut = false;
  const timers: NodeJS.Timeout[] = [];
  const endGroup = (): void => {
    if (pid === undefined || timers.length > 1) return;
    signalGroupQuietly(pid, 'SIGTERM');
    timers.push(
      setTimeout(() => {
        signalGroupQuietly(pid, 'SIGKILL');
        timers.push(
          setTimeout(() => {
            subprocess.stdout?.destroy();
            subprocess.stderr?.destroy();
          }, PIPE_GIVE_UP_MS),
        );
      }, FORCE_KILL_AFTER_MS),
    );
  };
  timers.push(
    setTimeout(() => {
      timedOut = true;
      endGroup();
    }, options.timeoutMs),
  );
  const onAbort = (): void => endGroup();
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  let result: Awaited<typeof subprocess>;
  try {
    result = await subprocess;
  } finally {
    for (const timer of timers) clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (pid !== undefined) {
      // Whatever it left behind in its group goes with it.
      signalGroupQuietly(pid, 'SIGKILL');
      unregisterChild(pid);
    }
  }

  const spawnCode = result.exitCode === undefined && result.signal === undefined ? errorCodeOf(result.cause) : undefined;
  if (result.failed && spawnCode !== undefined && SPAWN_ERROR_CODES.has(spawnCode)) {
    throw new OneWorksError('spawn_failed', `could not start ${file}: ${spawnCode}`, {
      data: { file, cwd: options.cwd, errno: spawnCode },
      cause: result.cause,
    });
  }

  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    stdout: toText(result.stdout),
    stderr: toText(result.stderr),
    timedOut,
    truncated: result.isMaxBuffer,
  };
}

function signalGroupQuietly(pid: number, signal: NodeJS.Signals): void {
  try {
    signalGroup(pid, signal);
  } catch {
    // EPERM: nothing of ours is left to signal.
  }
}

function errorCodeOf(cause: unknown): string | undefined {
  if (cause && typeof cause === 'object' && 'code' in cause && typeof cause.code === 'string') return cause.code;
  return undefined;
}

// execa types stdout as string | undefined depending on options; with our options it is a string.
function toText(output: unknown): string {
  return typeof output === 'string' ? output : '';
}
