import { isAbsolute, dirname } from 'node:path';
import { OneWorksError } from '../errors.js';
import { bwrapAvailable, buildChildEnv, runCommand, wrapWithBwrap } from '../process/index.js';
import { prepareSessionHome } from '../sandbox/index.js';
import type { SessionRecord } from '../store/index.js';
import { worktreeMounts } from './git-mounts.js';

/** The result of a `--check` command in one session's worktree. */
export interface CheckResult {
  command: string;
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** The last lines of its output (stdout then stderr), redacted by the caller. */
  outputTail: string;
}

export interface RunCheckOptions {
  stateDir: string;
  /** `sandbox` of the config: the check runs confined exactly like the session's agent. */
  sandbox: 'none' | 'bwrap';
  parentEnv: Readonly<Record<string, string | undefined>>;
  timeoutMs: number;
  /** The shell (default `/bin/sh`), run as `<shell> -c <command>`. */
  shell?: string | undefined;
}

const TAIL_LINES = 20;

/**
 * Runs `command` through `sh -c` in the session's working directory (inside its worktree)
 * under the session's sandbox: its HOME, the allowlisted environment, and with `bwrap` the same
 * confinement as the agent (read-only root, the worktree, the HOME and the worktree's parts of
 * `.git` writable). A non-zero exit or a timeout is a failed check, not an error; throws only
 * when the check cannot start (`spawn_failed`, e.g. bwrap missing).
 */
export async function runCheck(session: SessionRecord, command: string, options: RunCheckOptions): Promise<CheckResult> {
  const home = await prepareSessionHome(options.stateDir, session.id, []);
  const env = buildChildEnv({ parentEnv: options.parentEnv, home });
  const shell = options.shell ?? '/bin/sh';
  let argv = { command: shell, args: ['-c', command] };
  if (options.sandbox === 'bwrap') {
    if (!(await bwrapAvailable({ env: { PATH: env.PATH ?? '' } }))) {
      throw new OneWorksError('spawn_failed', 'sandbox: bwrap needs bubblewrap, installed and able to create namespaces here');
    }
    const mounts = session.worktree ? await worktreeMounts(session.worktree) : { readOnly: [], writable: [], readOnlyOver: [] };
    const readOnly = [...(isAbsolute(shell) ? [dirname(shell)] : []), ...mounts.readOnly];
    argv = wrapWithBwrap(argv, {
      workspace: session.workspace,
      home,
      readOnly,
      writable: mounts.writable,
      readOnlyOver: mounts.readOnlyOver,
    });
  }
  const started = Date.now();
  const result = await runCommand(argv.command, argv.args, {
    cwd: session.workspace,
    env,
    timeoutMs: options.timeoutMs,
    maxOutputBytes: 4 * 1024 * 1024,
  });
  const output = [result.stdout, result.stderr].filter((text) => text !== '').join('\n');
  return {
    command,
    passed: result.exitCode === 0 && !result.timedOut,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: Date.now() - started,
    outputTail: output.split('\n').slice(-TAIL_LINES).join('\n'),
  };
}
