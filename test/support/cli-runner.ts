import { findProcesses, type RigProcess } from './rig-processes.js';
import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

/** The `one-works` command of this checkout. */
export const ONE_WORKS_BIN = fileURLToPath(new URL('../../cli/bin.cjs', import.meta.url));

/** Deadline of one invocation; on expiry the CLI is killed and {@link runCli} throws. */
const DEFAULT_TIMEOUT_MS = 120_000;

/** How a finished `one-works` invocation exited and what it printed. */
export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface RunCliOptions {
  cwd: string;
  /** The whole environment of the CLI (undefined values dropped); nothing is inherited. */
  env: Record<string, string | undefined>;
  timeoutMs?: number;
}

/**
 * Runs `node cli/bin.cjs ...args` (the package's `bin`) as a user would, with no stdin and exactly `options.env`.
 * Resolves on any exit code; throws when the CLI did not exit by itself (timeout, signal),
 * with its output in the message. The child is always gone when this settles.
 */
export async function runCli(args: readonly string[], options: RunCliOptions): Promise<CliRun> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env)) if (value !== undefined) env[name] = value;
  const result = await execa(process.execPath, [ONE_WORKS_BIN, ...args], {
    cwd: options.cwd,
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    forceKillAfterDelay: 5_000,
  });
  if (result.exitCode === undefined || result.timedOut || result.isTerminated) {
    throw new Error(
      `one-works ${args.join(' ')} did not exit by itself (${result.signal ?? 'timeout'})\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
  return { exitCode: result.exitCode, stdout: result.stdout, stderr: result.stderr };
}

/**
 * A private temp directory for CLI runs: a working directory, a stand-in user HOME and XDG
 * directories, all inside `root`, so a run never reads or writes the real user's files and
 * everything it leaves behind can be found (and is removed by `remove()`). TMPDIR is private
 * too when asked for (to see what a run leaves in its `os.tmpdir()`); otherwise it is this
 * process's, which keeps tsx's compile cache warm (a cold one costs each run ~0.5 s).
 */
export interface CliSandbox {
  /** Canonical temp root. */
  root: string;
  /** The CLI's working directory (`root/work`). */
  cwd: string;
  /** HOME of the CLI (`root/home`). */
  home: string;
  /** TMPDIR of the CLI, i.e. its `os.tmpdir()`: `root/tmp` with `privateTmp`, else this process's. */
  tmp: string;
  /** `root/work/one-works.yaml`, the file `writeConfig` writes. */
  configPath: string;
  /** PATH (this process's), HOME, XDG_CONFIG/CACHE/STATE_HOME and TMPDIR inside the sandbox. */
  env: Record<string, string>;
  /** Writes `text` as `one-works.yaml` in the working directory; returns its path. */
  writeConfig(text: string): Promise<string>;
  /** Runs the CLI in `cwd` with `env` plus `extraEnv` (an undefined value removes a variable). */
  run(args: readonly string[], extraEnv?: Record<string, string | undefined>): Promise<CliRun>;
  /** Removes the whole root. */
  remove(): Promise<void>;
}

export interface CliSandboxOptions {
  /** Name prefix of the temp root (default `ow-cli-`). */
  prefix?: string;
  /** Give the CLI its own TMPDIR inside the root (default false). */
  privateTmp?: boolean;
}

/** Creates a {@link CliSandbox}; the caller calls `remove()`. */
export async function createCliSandbox(options: CliSandboxOptions = {}): Promise<CliSandbox> {
  const root = await realpath(await mkdtemp(join(tmpdir(), options.prefix ?? 'ow-cli-')));
  const cwd = join(root, 'work');
  const home = join(root, 'home');
  const tmp = options.privateTmp ? join(root, 'tmp') : tmpdir();
  await Promise.all([cwd, home, ...(options.privateTmp ? [tmp] : [])].map((dir) => mkdir(dir)));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    TMPDIR: tmp,
  };
  const configPath = join(cwd, 'one-works.yaml');
  return {
    root,
    cwd,
    home,
    tmp,
    configPath,
    env,
    writeConfig: async (text) => {
      await writeFile(configPath, text);
      return configPath;
    },
    run: (args, extraEnv = {}) => runCli(args, { cwd, env: { ...env, ...extraEnv } }),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}

/** A live process found in /proc: its pid and its argv joined by spaces. */
export type FoundProcess = RigProcess;

/**
 * Live processes (other than this one) whose argv, working directory or environment mention
 * `needle`; zombies are not listed. Used to show that a CLI run left no child behind.
 */
export function processesReferring(needle: string): FoundProcess[] {
  return findProcesses(needle);
}

/** A stack trace line as Node prints it (`    at fn (file:line:col)`). */
export const STACK_LINE = /^\s+at .+[:(]/m;

/** What the conformance global setup exports (test/conformance/global-setup.ts). */
export type ConformanceVariable = 'ONE_WORKS_TEST_DROID' | 'ONE_WORKS_TEST_DROID_0215' | 'ONE_WORKS_TEST_CACHE';

/** The value of a conformance variable; throws when the test runs outside the conformance project. */
export function conformanceValue(name: ConformanceVariable): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`${name} is not set: run this test in the vitest conformance project (its global setup installs droid)`);
  }
  return value;
}

/**
 * Per-test ceiling for tests that run the CLI several times: each run starts node and tsx,
 * which takes seconds on a loaded machine. A ceiling only, never a timing assertion.
 */
export const CLI_TEST_TIMEOUT_MS = 90_000;
