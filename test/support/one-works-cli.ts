import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { onTestFailed, TestRunner } from 'vitest';
import { stringify } from 'yaml';
import { RuntimeEventSchema, type RuntimeEvent } from '../../core/events/index.js';
import { SessionRecordSchema, type SessionRecord } from '../../core/store/index.js';
import { findProcesses, killQuietly, waitForExit, type RigProcess } from './rig-processes.js';
import { droidCustomModel, SCRIPTED_MODEL_ID, startScriptedModel } from './scripted-model.js';
import type { ScriptedModel, ScriptedModelOptions } from './scripted-model.js';

/** The `one-works` command of this checkout. */
export const ONE_WORKS_BIN = fileURLToPath(new URL('../../cli/bin.cjs', import.meta.url));

/** The BYOK api key the rigs write into customModels; a secret the CLI must redact. */
export const RIG_API_KEY = 'sk-rig-secret-7f3a9c21';

/** Deadline of one CLI invocation; on expiry execa kills the CLI and the result rejects (dispose ends the rest). */
const CLI_TIMEOUT_MS = 120_000;

/** What a finished `one-works` invocation printed and how it exited. */
export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A `one-works` process started by {@link CliRig.start}. */
export interface StartedCli {
  pid: number;
  kill(signal: NodeJS.Signals): void;
  result: Promise<CliResult>;
  /** What the CLI printed on stdout so far (e.g. a live view's streamed text). */
  stdoutSoFar(): string;
  /** What the CLI printed on stderr so far (e.g. the log of a `serve` started by hand). */
  stderrSoFar(): string;
  /** What it was started with, how long it ran, how it ended (if it did) and its stderr so far. */
  describe(): string;
}

export type { RigProcess } from './rig-processes.js';

export interface CliRigOptions {
  /** The scripted model's `baseUrl` (customModels entry "Scripted", id custom:Scripted-0). */
  baseUrl: string;
  /** Replaces `adapters.droid.cli` (default `{source: managed, version: 0.225.2}`). */
  cli?: Record<string, unknown>;
  /** Merged over the `adapters.droid` block (shallow). */
  droid?: Record<string, unknown>;
  /** Top-level `sandbox` (default: none). */
  sandbox?: 'none' | 'bwrap';
  /**
   * Adds an enabled `adapters.claude-code` block (managed CLAUDE_TEST_VERSION from the
   * conformance cache, model "scripted", endpoint = this scripted Anthropic base URL with
   * RIG_API_KEY), merged (shallow) with these keys.
   */
  claude?: { baseUrl: string } & Record<string, unknown>;
  /** The `adapters.process` block (harnesses), as given. */
  process?: Record<string, unknown>;
  /**
   * Adds an enabled `adapters.codex` block (managed CODEX_TEST_VERSION from the conformance
   * cache, model "scripted-model", endpoint = this scripted Responses base URL with
   * RIG_API_KEY), merged (shallow) with these keys.
   */
  codex?: { baseUrl: string } & Record<string, unknown>;
  /**
   * Adds `adapters.droid-acp` (droid's ACP mode; it runs with the `adapters.droid` block), with
   * these keys (`policy`) and `enabled: true`.
   */
  droidAcp?: Record<string, unknown>;
  /**
   * Adds an enabled `adapters.gemini` block (managed GEMINI_TEST_VERSION from the conformance
   * cache, model "scripted", endpoint = this scripted Gemini base URL with RIG_API_KEY), merged
   * (shallow) with these keys.
   */
  gemini?: { baseUrl: string } & Record<string, unknown>;
  /** Adds `adapters.acp` (ACP agents by command, run as acp:<name>), with `enabled: true`. */
  acp?: Record<string, unknown>;
  /**
   * Merged over the `orchestrator` block (default `{ idleExitMs: 500, askTimeoutMs: 0, keepWarmMs: 0 }`:
   * an auto-started server exits soon after its last client, an escalated ask without a terminal
   * is declined at once, and each turn's agent is closed after it, so that every `send` resumes
   * the native session in a new agent process).
   */
  orchestrator?: Record<string, unknown>;
  /** The top-level `defaults` block (e.g. `{ adapter: 'claude-code' }`); absent by default. */
  defaults?: Record<string, unknown>;
}

/** `orchestrator.idleExitMs` of a rig: short, so that an auto-started server does not outlive its test. */
export const RIG_IDLE_EXIT_MS = 500;

export interface RunOptions {
  /** Added to the CLI's environment (an `undefined` value removes a default variable). */
  env?: Record<string, string | undefined>;
}

/**
 * One temp directory holding everything a CLI run touches: `one-works.yaml`, the state
 * directory, an approved workspace and a stand-in user HOME. The managed droid comes from the
 * conformance cache (ONE_WORKS_TEST_CACHE), so nothing is downloaded.
 */
export interface CliRig {
  /** Canonical temp root; every path below is inside it. */
  root: string;
  configPath: string;
  stateDir: string;
  /** The approved workspace (canonical), the agent's working directory. */
  workspace: string;
  /** HOME of the CLI process unless a run overrides it; stands in for the user's real HOME. */
  userHome: string;
  /**
   * Runs `one-works --config <configPath> ...args` with a minimal environment (PATH, HOME =
   * userHome) plus `options.env`, no stdin. Never rejects on a non-zero exit; throws when the
   * CLI had to be killed (timeout, signal), with its output in the message.
   */
  run(args: readonly string[], options?: RunOptions): Promise<CliResult>;
  /**
   * Starts the same command as `run` without waiting: `pid` is the CLI's, `kill` signals it,
   * `result` settles like `run`'s promise once it exits.
   */
  start(args: readonly string[], options?: RunOptions): StartedCli;
  /** Session ids present under `<state>/sessions` (sorted). */
  sessionIds(): Promise<string[]>;
  /** The parsed, schema-checked session.json. */
  readSession(id: string): Promise<SessionRecord>;
  /** events.jsonl split into its non-empty lines, unparsed. */
  readEventLines(id: string): Promise<string[]>;
  /** Every line of events.jsonl parsed and checked against RuntimeEventSchema (throws on a bad line). */
  readEvents(id: string): Promise<RuntimeEvent[]>;
  /**
   * Resolves with the session's events once its log holds `count` `session.closed` events (the
   * orchestrator closes an agent after its turn settled, in the background, so the command that
   * followed the turn may exit first). Polls every 50 ms; a test timeout fails it.
   */
  closedEvents(id: string, count?: number): Promise<RuntimeEvent[]>;
  /** `<state>/sessions/<id>/home`. */
  sessionHome(id: string): string;
  /**
   * Live processes (other than this one) whose argv, cwd or environment mention the rig root
   * (Linux /proc), except the orchestrator the CLI started in the background (`serve --auto`):
   * it exits by itself `orchestrator.idleExitMs` after its last client, and `dispose` stops it.
   * Everything it started (droid, tools) is listed.
   */
  processes(): RigProcess[];
  /** The rig's `one-works serve` processes (auto-started or explicit). */
  servers(): RigProcess[];
  /**
   * Waits (at most `timeoutMs`, default 20 s) until the rig's orchestrator has exited: no
   * `serve` process of the rig and no `<state>/owner.json` (released as it exits). An auto-started
   * one exits RIG_IDLE_EXIT_MS after its last client; what scans the state directory waits for
   * that first, so that the scan covers what the server writes as it stops and no file goes while
   * the scan reads it.
   */
  untilNoServer(timeoutMs?: number): Promise<void>;
  /**
   * What a failure message needs: every command this rig ran or started (exit code or still
   * running, stderr) and `<state>/orchestrator.log`. A failing test gets it appended to its error
   * by itself (see {@link CliRigs}); a test that waits on something while its command may have
   * exited uses it in its own error (see {@link waitWhileRunning}).
   */
  report(): Promise<string>;
}

/**
 * Creates and tears down rigs. Call `dispose()` in `afterEach`: it stops each rig's
 * orchestrator gracefully (SIGTERM to the owner pid in `<state>/owner.json`, then waits for it
 * to exit), SIGKILLs (by pid) any process still referring to a rig, runs the registered closers
 * (model servers) and removes every temp root.
 *
 * A test that fails after creating a rig gets each of its rigs' {@link CliRig.report} appended to
 * its error message (taken before `dispose` removes the rig): the commands' exit codes and stderr
 * and the orchestrator's log, which a failure in CI cannot otherwise show.
 */
export class CliRigs {
  readonly #roots: string[] = [];
  readonly #stateDirs: string[] = [];
  readonly #closers: (() => Promise<void>)[] = [];
  // Rigs of the running test, and their reports once dispose took them (the rig is gone then).
  readonly #rigs: CliRig[] = [];
  readonly #reports: string[] = [];
  readonly #watched = new WeakSet<object>();

  /** Registers a closer run by `dispose()` (e.g. a scripted model's `close`). */
  defer(close: () => Promise<void>): void {
    this.#closers.push(close);
  }

  /** Starts a scripted model server on 127.0.0.1, closed by `dispose()`. */
  async model(options: ScriptedModelOptions): Promise<ScriptedModel> {
    const model = await startScriptedModel(options);
    this.defer(() => model.close());
    return model;
  }

  /** Makes an empty canonical temp dir, removed by `dispose()`. */
  async tempDir(prefix = 'ow-rig-'): Promise<string> {
    const dir = await realpath(await mkdtemp(join(tmpdir(), prefix)));
    this.#roots.push(dir);
    return dir;
  }

  async create(options: CliRigOptions): Promise<CliRig> {
    const root = await this.tempDir();
    const rig = buildRig(root);
    this.#stateDirs.push(rig.stateDir);
    this.#rigs.push(rig);
    this.#reportOnFailure();
    await Promise.all([mkdir(rig.workspace), mkdir(rig.userHome)]);
    const { entry } = droidCustomModel(options.baseUrl, { apiKey: RIG_API_KEY });
    const config = {
      state: { directory: rig.stateDir },
      cache: { directory: testCache() },
      workspaces: { approved: [rig.workspace] },
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
      orchestrator: { idleExitMs: RIG_IDLE_EXIT_MS, askTimeoutMs: 0, keepWarmMs: 0, ...options.orchestrator },
      ...(options.defaults ? { defaults: options.defaults } : {}),
      adapters: {
        droid: {
          cli: options.cli ?? { source: 'managed', version: '0.225.2' },
          model: SCRIPTED_MODEL_ID,
          autonomy: 'low',
          env: { FACTORY_AIRGAP_ENABLED: 'true' },
          customModels: [entry],
          ...options.droid,
        },
        ...(options.claude ? { 'claude-code': claudeBlock(options.claude) } : {}),
        ...(options.codex ? { codex: codexBlock(options.codex) } : {}),
        ...(options.droidAcp ? { 'droid-acp': { enabled: true, ...options.droidAcp } } : {}),
        ...(options.acp ? { acp: { enabled: true, ...options.acp } } : {}),
        ...(options.gemini ? { gemini: geminiBlock(options.gemini) } : {}),
        ...(options.process ? { process: options.process } : {}),
      },
    };
    await writeFile(rig.configPath, stringify(config));
    return rig;
  }

  async dispose(): Promise<void> {
    for (const rig of this.#rigs.splice(0)) this.#reports.push(await rig.report());
    for (const stateDir of this.#stateDirs.splice(0)) await stopServer(stateDir);
    // A few rounds: a CLI killed mid-start may still have spawned droid just before it died.
    for (let round = 0; round < 5; round += 1) {
      const leftovers = this.#roots.flatMap((root) => findProcesses(root));
      if (leftovers.length === 0) break;
      for (const leftover of leftovers) killQuietly(leftover.pid);
      await sleep(100);
    }
    for (const close of this.#closers.splice(0).reverse()) await close();
    for (const root of this.#roots.splice(0)) await rm(root, { recursive: true, force: true });
  }

  // Once per test: when it fails, its rigs' reports go into its first error's message (vitest
  // runs onTestFailed after afterEach, so dispose has taken them by then; a rig left undisposed
  // is reported live). A rig made outside a test (beforeAll) registers nothing: it is reported only
  // along with a rig that the failing test made itself.
  #reportOnFailure(): void {
    const test = TestRunner.getCurrentTest();
    if (!test || this.#watched.has(test)) return;
    this.#watched.add(test);
    // What earlier tests' rigs left (they passed) is not this test's.
    this.#reports.length = 0;
    onTestFailed(async ({ task }) => {
      const reports = [...this.#reports.splice(0), ...(await Promise.all(this.#rigs.map((rig) => rig.report())))];
      const error = task.result?.errors?.[0];
      if (error && reports.length > 0) error.message += `\n\n${reports.join('\n\n')}`;
    });
  }
}

// Stops the state directory's orchestrator as a user would (SIGTERM), so it cancels its turns
// and stops its children itself; the sweep in dispose kills whatever is left after 20 s.
async function stopServer(stateDir: string): Promise<void> {
  let pid: number | undefined;
  try {
    pid = (JSON.parse(await readFile(join(stateDir, 'owner.json'), 'utf8')) as { pid?: number }).pid;
  } catch {
    return;
  }
  if (pid === undefined || pid === process.pid) return;
  // Only a live `one-works --config <this rig's config> serve`: a stale owner file's pid (its
  // server was killed) may be reused by anything, another rig's server included, which a SIGTERM
  // would stop quietly (exit 0) under its own test.
  const args = (await readFile(`/proc/${pid}/cmdline`, 'latin1').catch(() => '')).split('\0');
  const config = join(dirname(stateDir), 'one-works.yaml');
  if (!args.includes('serve') || args[args.indexOf('--config') + 1] !== config) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  await waitForExit([pid], 20_000);
}

// argv of a `one-works --config <config> serve …` process.
const isServer = (configPath: string, p: RigProcess): boolean => p.args.includes(`${ONE_WORKS_BIN} --config ${configPath} serve`);

function buildRig(root: string): CliRig {
  const started: StartedCli[] = [];
  const launch = (args: readonly string[], options: RunOptions = {}): StartedCli => {
    const cli = startOneWorks(['--config', configPath, ...args], { cwd: root, env: { HOME: userHome, ...options.env } });
    started.push(cli);
    return cli;
  };
  const stateDir = join(root, 'state');
  const userHome = join(root, 'user-home');
  const configPath = join(root, 'one-works.yaml');
  const sessionDir = (id: string): string => join(stateDir, 'sessions', id);
  const readEventLines = async (id: string): Promise<string[]> =>
    (await readFile(join(sessionDir(id), 'events.jsonl'), 'utf8')).split('\n').filter((line) => line !== '');
  const rig: CliRig = {
    root,
    configPath,
    stateDir,
    workspace: join(root, 'ws'),
    userHome,
    run: (args, options) => launch(args, options).result,
    start: launch,
    sessionIds: async () => (await readdir(join(stateDir, 'sessions')).catch(() => [] as string[])).sort(),
    readSession: async (id) => SessionRecordSchema.parse(JSON.parse(await readFile(join(sessionDir(id), 'session.json'), 'utf8'))),
    readEventLines,
    readEvents: async (id) => (await readEventLines(id)).map((line) => RuntimeEventSchema.parse(JSON.parse(line)) as RuntimeEvent),
    closedEvents: async (id, count = 1) => {
      for (;;) {
        const events = (await readEventLines(id)).map((line) => RuntimeEventSchema.parse(JSON.parse(line)) as RuntimeEvent);
        if (events.filter((event) => event.type === 'session.closed').length >= count) return events;
        await sleep(50);
      }
    },
    sessionHome: (id) => join(sessionDir(id), 'home'),
    // `serve --auto`, with the intent of the `run` that started it (`--intent <json>`) or without.
    processes: () => findProcesses(root).filter((p) => !(isServer(configPath, p) && / serve --auto( --intent .*)?$/.test(p.args))),
    servers: () => findProcesses(root).filter((p) => isServer(configPath, p)),
    untilNoServer: async (timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (rig.servers().length > 0 || existsSync(join(stateDir, 'owner.json'))) {
        if (Date.now() >= deadline) throw new Error(`the rig's orchestrator still runs after ${timeoutMs} ms\n${await rig.report()}`);
        await sleep(50);
      }
    },
    report: async () => {
      const log = await readFile(logPath(stateDir), 'utf8').catch((error: NodeJS.ErrnoException) => `(none: ${error.code})`);
      return [
        `rig ${root}:`,
        ...started.map((cli) => indent(cli.describe())),
        indent(`${logPath(stateDir)}:\n${indent(tail(log, REPORT_LOG_CHARS))}`),
      ].join('\n');
    },
  };
  return rig;
}

/** How much of an orchestrator.log, and of a command's stderr, a report shows (the end). */
const REPORT_LOG_CHARS = 12_000;
const REPORT_STDERR_CHARS = 4_000;

const logPath = (stateDir: string): string => join(stateDir, 'orchestrator.log');
const indent = (text: string): string => text.replace(/^/gm, '  ');
const tail = (text: string, chars: number): string => (text.length > chars ? `…${text.slice(-chars)}` : text);

/**
 * Polls `check` every 100 ms until it returns a value, while `cli` runs: throws when `cli` exits
 * first (it may have failed before doing what the test waits for), with the rig's
 * {@link CliRig.report} (its exit code, stderr and the orchestrator's log), and after `timeoutMs`
 * with the same report.
 */
export async function waitWhileRunning<T>(
  rig: Pick<CliRig, 'report'>,
  cli: Pick<StartedCli, 'result'>,
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  let exited = false;
  void cli.result.then(
    () => {
      exited = true;
    },
    () => {
      exited = true;
    },
  );
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Whether it had exited is read before the check: a command that did what was waited for and
    // then exited is no failure.
    const gone = exited;
    const value = await check();
    if (value !== undefined) return value;
    if (gone) throw new Error(`the command exited before ${what}\n${await rig.report()}`);
    if (Date.now() >= deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}\n${await rig.report()}`);
    await sleep(100);
  }
}

/**
 * Starts `cli/bin.cjs` (the package's `bin`) with `args` under this Node binary. The environment is PATH from this
 * process plus `options.env` (undefined values dropped); nothing else is inherited. The result
 * never rejects on a non-zero exit; it rejects when the CLI was killed by a signal or timed
 * out, with its output in the message.
 */
export function startOneWorks(args: readonly string[], options: { cwd: string; env?: Record<string, string | undefined> }): StartedCli {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries({ PATH: process.env.PATH, ...options.env })) if (value !== undefined) env[name] = value;
  const startedAt = Date.now();
  let ended: string | undefined;
  const child = execa(process.execPath, [ONE_WORKS_BIN, ...args], {
    cwd: options.cwd,
    env,
    extendEnv: false,
    stdin: 'ignore',
    reject: false,
    timeout: CLI_TIMEOUT_MS,
    forceKillAfterDelay: 5_000,
  });
  const result = child.then((done) => {
    ended = `${done.timedOut ? 'timed out' : done.signal ? `was killed (${done.signal})` : `exited ${done.exitCode}`} after ${Date.now() - startedAt} ms`;
    if (done.exitCode === undefined || done.timedOut) {
      throw new Error(
        `one-works ${args.join(' ')} did not exit by itself (${done.signal ?? 'timeout'})\nstdout: ${done.stdout}\nstderr: ${done.stderr}`,
      );
    }
    return { exitCode: done.exitCode, stdout: done.stdout, stderr: done.stderr };
  });
  // The caller awaits `result`; this only keeps an abandoned one (a failed test) from being reported as unhandled.
  result.catch(() => undefined);
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8');
  });
  let complained = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    complained += chunk.toString('utf8');
  });
  const describe = (): string =>
    [
      `\`one-works ${args.join(' ')}\` (pid ${child.pid}) ${ended ?? `still running after ${Date.now() - startedAt} ms`}`,
      complained === '' ? '  stderr: (empty)' : `  stderr:\n${indent(indent(tail(complained, REPORT_STDERR_CHARS)))}`,
    ].join('\n');
  return {
    pid: child.pid!,
    kill: (signal) => child.kill(signal),
    result,
    stdoutSoFar: () => printed,
    stderrSoFar: () => complained,
    describe,
  };
}

/** The Claude Code version the conformance tests drive (installed by the global setup). */
export const CLAUDE_TEST_VERSION = '2.1.333';

function claudeBlock(options: { baseUrl: string } & Record<string, unknown>): Record<string, unknown> {
  const { baseUrl, ...rest } = options;
  return {
    enabled: true,
    cli: { source: 'managed', version: CLAUDE_TEST_VERSION },
    model: 'scripted',
    autonomy: 'low',
    endpoint: { baseUrl, apiKey: RIG_API_KEY },
    ...rest,
  };
}

/** The Codex version the conformance tests drive (installed by the global setup). */
export const CODEX_TEST_VERSION = '0.171.0';

/** The model name rigs give Codex (unknown to it: a warning each turn, never a failure). */
export const CODEX_TEST_MODEL = 'scripted-model';

function codexBlock(options: { baseUrl: string } & Record<string, unknown>): Record<string, unknown> {
  const { baseUrl, ...rest } = options;
  return {
    enabled: true,
    cli: { source: 'managed', version: CODEX_TEST_VERSION },
    model: CODEX_TEST_MODEL,
    autonomy: 'low',
    endpoint: { baseUrl, apiKey: RIG_API_KEY },
    ...rest,
  };
}

/** The Gemini CLI version the conformance tests drive (installed by the global setup). */
export const GEMINI_TEST_VERSION = '0.61.0';

function geminiBlock(options: { baseUrl: string } & Record<string, unknown>): Record<string, unknown> {
  const { baseUrl, ...rest } = options;
  return {
    enabled: true,
    cli: { source: 'managed', version: GEMINI_TEST_VERSION },
    model: 'scripted',
    autonomy: 'low',
    endpoint: { baseUrl, apiKey: RIG_API_KEY },
    ...rest,
  };
}

function testCache(): string {
  const cache = process.env.ONE_WORKS_TEST_CACHE;
  if (cache === undefined || cache === '') {
    throw new Error('ONE_WORKS_TEST_CACHE is not set: run these tests in the vitest conformance project (its global setup installs droid)');
  }
  return cache;
}
