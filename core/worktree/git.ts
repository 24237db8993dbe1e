import { ERROR_CODES, OneWorksError } from '../errors.js';
import { runCommand, type RunCommandResult } from '../process/index.js';

/**
 * Variables git may see from the parent environment. Everything else stays behind, in
 * particular every `GIT_*` variable (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, GIT_CONFIG_*…),
 * which could point git at another repository or inject configuration. HOME and XDG_CONFIG_HOME
 * cross so that the user's own identity and settings apply.
 */
export const GIT_INHERITED_ENV_VARS = [
  'PATH',
  'HOME',
  'XDG_CONFIG_HOME',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'USER',
  'LOGNAME',
] as const;

/** How One Works runs git. */
export interface GitOptions {
  /** The environment to pick the allowlist from (usually `process.env`). */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** Run the repository's hooks (default false: `core.hooksPath=/dev/null`). */
  hooks?: boolean | undefined;
  /** The git binary (default `git` on PATH). */
  command?: string | undefined;
  /** Per-command deadline (default 60 s). */
  timeoutMs?: number | undefined;
}

/** One git invocation's extras: a working directory and variables One Works itself sets. */
export interface GitCall {
  cwd: string;
  /** Variables One Works sets for this call (e.g. GIT_INDEX_FILE for a scratch index). */
  env?: Readonly<Record<string, string>> | undefined;
  /** Exit codes that are answers, not failures (e.g. 1 for `merge-tree` with conflicts). */
  okExitCodes?: readonly number[] | undefined;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/**
 * Settings every git call starts with: no hooks (unless enabled), no fsmonitor daemon, no
 * credential or terminal prompts. Passed as `-c` so they win over any configuration file.
 */
function safetyArgs(options: GitOptions): string[] {
  return [...(options.hooks ? [] : ['-c', 'core.hooksPath=/dev/null']), '-c', 'core.fsmonitor=false', '-c', 'core.pager=cat'];
}

/** The complete environment of a git child: the allowlist, then One Works' own variables. */
export function gitEnv(options: GitOptions, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of GIT_INHERITED_ENV_VARS) {
    const value = options.parentEnv[name];
    if (value !== undefined) env[name] = value;
  }
  return { ...env, GIT_TERMINAL_PROMPT: '0', GIT_OPTIONAL_LOCKS: '0', ...extra };
}

/**
 * Runs `git <args>` (argv, no shell) in `call.cwd` and resolves with its result when it exits
 * 0 (or with one of `okExitCodes`). Throws OneWorksError `git_failed` naming the command and
 * quoting git's stderr otherwise, `spawn_failed` when git is not installed.
 */
export async function runGit(options: GitOptions, args: readonly string[], call: GitCall): Promise<RunCommandResult> {
  const result = await runCommand(options.command ?? 'git', [...safetyArgs(options), ...args], {
    cwd: call.cwd,
    env: gitEnv(options, call.env),
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxOutputBytes: MAX_OUTPUT_BYTES,
  });
  const ok = result.exitCode === 0 || (result.exitCode !== null && (call.okExitCodes ?? []).includes(result.exitCode));
  if (ok && !result.truncated) return result;
  const why = result.timedOut ? 'timed out' : result.truncated ? 'printed too much' : `exited with ${result.exitCode ?? result.signal}`;
  const detail = result.stderr.trim().split('\n').slice(-5).join('\n');
  throw new OneWorksError(ERROR_CODES.GIT_FAILED, `git ${args.join(' ')} ${why}${detail ? `: ${detail}` : ''}`, {
    data: { args: [...args], cwd: call.cwd, exitCode: result.exitCode },
  });
}

/** `runGit` returning stdout trimmed of its final newline. */
export async function gitText(options: GitOptions, args: readonly string[], call: GitCall): Promise<string> {
  return (await runGit(options, args, call)).stdout.trimEnd();
}

/** True when `git <args>` exits 0, false when it exits 1 (e.g. `rev-parse --verify --quiet`); throws otherwise. */
export async function gitSucceeds(options: GitOptions, args: readonly string[], cwd: string): Promise<boolean> {
  return (await runGit(options, args, { cwd, okExitCodes: [1] })).exitCode === 0;
}
