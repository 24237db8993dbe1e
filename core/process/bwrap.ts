import { isOneWorksError } from '../errors.js';
import { runCommand } from './run-command.js';

/** The part of a launch that bubblewrap wraps. */
export interface WrappableLaunch {
  command: string;
  args: readonly string[];
}

export interface BwrapMounts {
  /** Canonical workspace: bound writable at the same path. */
  workspace: string;
  /** The session HOME: bound writable at the same path. */
  home: string;
  /** Further paths bound read-only at the same path after the private /tmp (e.g. the CLI binary's directory when it lives under /tmp). */
  readOnly?: readonly string[];
  /** Further paths bound writable at the same path, after the workspace and HOME (e.g. the parts of a repository's `.git` a worktree session writes). */
  writable?: readonly string[];
  /** Paths bound read-only last, over the writable ones (e.g. other branches' refs in the directory of the session's own ref). */
  readOnlyOver?: readonly string[];
}

/** Name (or path) of the bubblewrap binary. */
export const BWRAP_COMMAND = 'bwrap';

/**
 * Returns the command and argv that run `launch` under bubblewrap: the root file system
 * read-only, a fresh /dev, /proc and /tmp, the workspace and the session HOME writable at their
 * own paths, its own pid namespace, and death with its parent. Pure: checks nothing on disk.
 * The binds come after `--tmpfs /tmp`, so a workspace or HOME under /tmp stays visible.
 * Paths are used as given (pass canonical ones); the cwd of the launch is kept by the spawn.
 */
export function wrapWithBwrap<T extends WrappableLaunch>(
  launch: T,
  mounts: BwrapMounts,
  bwrapCommand: string = BWRAP_COMMAND,
): T & { command: string; args: string[] } {
  const args = [
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--tmpfs',
    '/tmp',
    ...(mounts.readOnly ?? []).flatMap((path) => ['--ro-bind', path, path]),
    '--bind',
    mounts.workspace,
    mounts.workspace,
    '--bind',
    mounts.home,
    mounts.home,
    ...(mounts.writable ?? []).flatMap((path) => ['--bind', path, path]),
    ...(mounts.readOnlyOver ?? []).flatMap((path) => ['--ro-bind', path, path]),
    '--die-with-parent',
    '--unshare-pid',
    '--',
    launch.command,
    ...launch.args,
  ];
  return { ...launch, command: bwrapCommand, args };
}

/**
 * True when bubblewrap is installed and can create its namespaces here (probed by running
 * `true` inside a minimal sandbox, bounded by `timeoutMs`). False when the binary is missing
 * or the probe fails (user namespaces disabled, say); throws only on an unexpected failure.
 */
export async function bwrapAvailable(
  options: { command?: string; env?: Readonly<Record<string, string>>; timeoutMs?: number } = {},
): Promise<boolean> {
  const env = options.env ?? (process.env.PATH === undefined ? {} : { PATH: process.env.PATH });
  try {
    const result = await runCommand(
      options.command ?? BWRAP_COMMAND,
      ['--ro-bind', '/', '/', '--dev', '/dev', '--unshare-pid', '--die-with-parent', '--', 'true'],
      { env, timeoutMs: options.timeoutMs ?? 5000, maxOutputBytes: 64 * 1024 },
    );
    return result.exitCode === 0;
  } catch (error) {
    if (isOneWorksError(error, 'spawn_failed')) return false;
    throw error;
  }
}
