import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { ONE_WORKS_BIN, type CliRig } from './one-works-cli.js';

/** The pty driver (python3's `pty` module; no native Node dependency). */
const PTY_RUN = fileURLToPath(new URL('./pty-run.py', import.meta.url));

/** Deadline of one run inside the terminal; the driver kills the command's group on expiry. */
const PTY_TIMEOUT_MS = 120_000;

/** One prompt and the keys typed at it. `expect` is a regular expression (Python syntax). */
export interface PtyStep {
  expect: string;
  send: string;
}

export interface PtyResult {
  /** The CLI's exit code (128+N after signal N). */
  exitCode: number;
  /** Everything the terminal showed (stdout and stderr of the CLI, and the echo of typed keys). */
  screen: string;
  /** The CLI's pid, for checking that it is gone. */
  pid: number;
  /** The driver's own pid. */
  driverPid: number;
  /** Dialog steps whose prompt never appeared, as the driver reported them. */
  diagnostics: string;
}

/**
 * Runs `one-works --config <rig config> ...args` as `rig.run` does (minimal environment, cwd =
 * rig root), but on a pseudo-terminal: stdin, stdout and stderr are one TTY, and `dialog` is
 * typed as its prompts appear (a reply ending in `\r` is Enter). Throws when the run had to be
 * killed (timeout), with the screen in the message.
 */
export async function runInPty(rig: CliRig, args: readonly string[], dialog: readonly PtyStep[]): Promise<PtyResult> {
  const env = ptyDriverEnv(rig);
  const driver = execa(
    'python3',
    [
      PTY_RUN,
      '--timeout',
      String(PTY_TIMEOUT_MS / 1000),
      '--dialog',
      JSON.stringify(dialog.map((s) => [s.expect, s.send])),
      '--',
      process.execPath,
      ONE_WORKS_BIN,
      '--config',
      rig.configPath,
      ...args,
    ],
    { cwd: rig.root, env, extendEnv: false, stdin: 'ignore', reject: false, timeout: PTY_TIMEOUT_MS + 10_000, forceKillAfterDelay: 2_000 },
  );
  const done = await driver;
  const pid = Number(/pty-run: pid (\d+)/.exec(done.stderr)?.[1]);
  if (done.exitCode === 124 || done.exitCode === undefined || done.timedOut) {
    throw new Error(`one-works ${args.join(' ')} did not finish on the terminal\n${done.stderr}\nscreen:\n${done.stdout}`);
  }
  return {
    exitCode: done.exitCode,
    screen: done.stdout,
    pid,
    driverPid: driver.pid!,
    diagnostics: done.stderr.replace(/^pty-run: pid \d+\n?/, ''),
  };
}

// What the driver is started with (it may add to it: see environmentInPty).
const ptyDriverEnv = (rig: CliRig): Record<string, string> => ({ PATH: process.env.PATH ?? '', HOME: rig.userHome, TERM: 'dumb' });

/**
 * The environment a command run by {@link runInPty} gets: the driver's own start may change it
 * (Python's locale coercion sets LC_CTYPE; a pyenv shim puts its directories first on PATH). A
 * `serve` a pty command must match (the orchestrator's fingerprint covers such variables) is
 * started with it.
 */
export async function environmentInPty(rig: CliRig): Promise<Record<string, string>> {
  const done = await execa('python3', [PTY_RUN, '--timeout', '10', '--dialog', '[]', '--', '/usr/bin/env'], {
    cwd: rig.root,
    env: ptyDriverEnv(rig),
    extendEnv: false,
    stdin: 'ignore',
  });
  return Object.fromEntries(
    done.stdout
      .split(/\r?\n/)
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}
