import { execa } from 'execa';
import { OneWorksError } from '../errors.js';

/** Options of one short-lived command (a `--version` probe, say). */
export interface RunCommandOptions {
  /** Working directory; defaults to the current one. */
  cwd?: string;
  /** The child's COMPLETE environment: nothing of `process.env` is inherited. */
  env: Readonly<Record<string, string>>;
  /** Wall-clock limit; on expiry the child gets SIGTERM, then SIGKILL after a short grace. */
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

// Grace between SIGTERM and SIGKILL for a one-shot command that overstayed its timeout.
const FORCE_KILL_AFTER_MS = 2_000;

const SPAWN_ERROR_CODES = new Set(['ENOENT', 'EACCES', 'ENOEXEC', 'EPERM', 'ENOTDIR']);

/**
 * Runs `file` with `args` once (no shell, stdin ignored) and collects its output.
 *
 * Resolves with the result for any exit, including non-zero codes, timeouts and signals.
 * Rejects with `spawn_failed` (naming `file`) when the child could not be started at all
 * (missing file, not executable, bad cwd). The caller owns interpreting the output.
 */
export async function runCommand(file: string, args: readonly string[], options: RunCommandOptions): Promise<RunCommandResult> {
  const result = await execa(file, args, {
    cwd: options.cwd,
    env: { ...options.env },
    extendEnv: false,
    shell: false,
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs,
    forceKillAfterDelay: FORCE_KILL_AFTER_MS,
    maxBuffer: options.maxOutputBytes,
    cancelSignal: options.signal,
    windowsHide: true,
  });

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
    timedOut: result.timedOut,
    truncated: result.isMaxBuffer,
  };
}

function errorCodeOf(cause: unknown): string | undefined {
  if (cause && typeof cause === 'object' && 'code' in cause && typeof cause.code === 'string') return cause.code;
  return undefined;
}

// execa types stdout as string | undefined depending on options; with our options it is a string.
function toText(output: unknown): string {
  return typeof output === 'string' ? output : '';
}
