import { existsSync, readdirSync, readFileSync, rmdirSync, unlinkSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Autonomy } from '../core/adapter.js';
import { type LocatedState, locateState } from '../core/config/locate.js';

import type { SessionIntent } from '../core/orchestrator/intent.js';
// The modules themselves (no index.js): this file is a bundle of its own, loaded before the command's.
import { checkPrompt } from '../core/orchestrator/session-metadata.js';
import { presentationOf } from '../core/process/env.js';
import { launchAhead } from '../core/session/launch-ahead.js';
import {
  AUTO_START_DEADLINE_MS,
  AUTO_START_FAST_POLL_MS,
  AUTO_START_SLOW_POLL_MS,
  type AutoServer,
  type ServerPlace,
  spawnAutoServer,
  startWaitNotices,
} from './daemon/auto-start.js';
import { COMMAND_MATCHED, COMMAND_OUTPUT, COMMAND_RUN, COMMAND_SIGNAL, COMMAND_TURN } from './daemon/command-methods.js';
import { type LostTurn, lostTurnLines } from './lost-turn.js';
import { logPath, socketPath } from './daemon/socket-path.js';
import { PROCESS_STDERR, PROCESS_STDOUT, stdinIsTTY } from './stdio.js';
import { terminalSafe } from './terminal-text.js';

// cli/bin.cjs turns it on for a build (the directory of its code caches).
export { useConfigValueCache } from '../core/config/value-cache.js';
// cli/bin.cjs exits a handed run's client once its output is written.
export { outputWritten } from './stdio.js';

/**
 * `run`'s intent, told before the command's bundle loads. cli/bin.cjs loads this module as a
 * bundle of its own (dist/cli/early-intent.cjs, some 22 kB against the command's 2 MB) and
 * calls {@link tellEarlyIntent} with the command line: when it is a plain `run` whose orchestrator
 * listens, the intent is written on a new connection at once, so that the agent starts while the
 * command's bundle loads, and the connection is handed to the command (`main`'s `earlyIntent`).
 * The command parses its arguments itself and takes the connection over only when its own intent
 * is the same (cli/commands/run-intent.ts); otherwise it tells its intent on it again. When no
 * orchestrator listens, the server is started here with the intent (`serve --auto --intent`, as
 * the command would start it once loaded), and the command is handed to that server once it
 * listens ({@link delegateStartedRun}), or, when it cannot be, waits for that one.
 */
export interface EarlySeed {
  /** The intent written. */
  intent: SessionIntent;
  /** `--config` as given on the command line (undefined: none). */
  config: string | undefined;
  /** The state directory located from that config (see `locateState`). */
  located: LocatedState;
  /** True when the state directory's socket was there: the intent went out on {@link EarlySeed.socket}. */
  listening: boolean;
  /**
   * Settles once the intent is written on the connection, or none could be made, at most
   * EARLY_CONNECT_WAIT_MS after the tell: the caller awaits it before loading the command, whose
   * synchronous load would otherwise hold the connect's callback, and the intent, until it is done.
   */
  sent: Promise<void>;
  /** The connection the intent went on; undefined when none could be made. Nothing reads it before the command takes it. */
  socket: Promise<Socket | undefined>;
  /**
   * The server started with the intent because none listened (`listening` false); undefined when
   * one listened or none could be started (the command then starts one itself).
   */
  server: AutoServer | undefined;
  /**
   * For a command that does not use them: closes the connection (the server discards the agent),
   * or asks the server started here to exit once it serves (see {@link retireServer}). Resolves
   * when that is done; never rejects. Once only: later calls get the same promise.
   */
  discard(): Promise<void>;
}

/** What {@link tellEarlyIntent} does besides reading its arguments (tests replace the server's start). */
export interface EarlyDeps {
  /** Starts a background server for a state directory with an intent (auto-start.ts). */
  startServer(place: ServerPlace, intent: SessionIntent): AutoServer;
}

const DEFAULT_DEPS: EarlyDeps = { startServer: spawnAutoServer };

/** The request id of the early intent: never one of the command's own connection (`c1`, `c2`, …), whose client ignores its answer. */
export const EARLY_INTENT_ID = 'early-intent';

/** The longest the command waits for its early connection before loading (a local socket connects in about a millisecond). */
const EARLY_CONNECT_WAIT_MS = 20;

/** The flags of `run` its intent is made of. */
export interface IntentFlags {
  workspace?: string | undefined;
  model?: string | undefined;
  effort?: string | undefined;
  autonomy?: string | undefined;
  title?: string | undefined;
  adapter?: string | undefined;
}

/** The intent of a `run` with `flags` in `cwd`: the one function both the early tell and the command make it with. */
export function intentOf(flags: IntentFlags, env: NodeJS.ProcessEnv, cwd: string): SessionIntent {
  return {
    ...(flags.adapter ? { adapter: flags.adapter } : {}),
    workspace: resolve(cwd, flags.workspace ?? '.'),
    ...(flags.model ? { model: flags.model } : {}),
    ...(flags.effort ? { effort: flags.effort } : {}),
    ...(flags.autonomy ? { autonomy: flags.autonomy as Autonomy } : {}),
    ...(flags.title ? { title: flags.title } : {}),
    presentation: presentationOf(env),
  };
}

/** True when two intents are the same (made by {@link intentOf}, so with their keys in the same order). */
export function sameIntent(a: SessionIntent, b: SessionIntent): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * Tells the intent of the command line `args` (argv without node and the script) to the
 * orchestrator of its state directory, or returns undefined: for any command but a plain `run`
 * (see {@link scanRunArgs}), a prompt `run` refuses, or a state directory that cannot be located
 * early. Without a socket there, the server is started with the intent (`server`; `listening`
 * false): every ms before the agent's spawn is on the path of the turn, and the command's bundle,
 * config and checks take some 40 ms before it would start one. Never throws.
 */
export function tellEarlyIntent(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  deps: EarlyDeps = DEFAULT_DEPS,
): EarlySeed | undefined {
  try {
    const scanned = scanRunArgs(args);
    if (!scanned) return undefined;
    // A refused prompt starts nothing: the command refuses it before it tells any intent.
    checkPrompt(scanned.prompt);
    const located = locateState({ ...(scanned.config ? { path: resolve(cwd, scanned.config) } : {}), cwd, env });
    if (!located) return undefined;
    const path = socketPath(located.stateDir);
    const intent = intentOf(scanned.flags, env, cwd);
    if (!existsSync(path)) {
      const none = Promise.resolve(undefined);
      const server = startServer(deps, { stateDir: located.stateDir, configPath: located.configPath, cwd, env }, intent);
      let discarded: Promise<void> | undefined;
      return {
        intent,
        config: scanned.config,
        located,
        listening: false,
        sent: none,
        socket: none,
        server: server?.started,
        discard: () => (discarded ??= server ? retireServer(server.started, located.stateDir, server.madeStateDir) : Promise.resolve()),
      };
    }
    const socket = connect(path, intent);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((done) => {
      timer = setTimeout(done, EARLY_CONNECT_WAIT_MS);
      timer.unref();
    });
    const sent = Promise.race([socket.then(() => undefined), waited]).finally(() => clearTimeout(timer));
    return {
      intent,
      config: scanned.config,
      located,
      listening: true,
      sent,
      socket,
      server: undefined,
      discard: () => socket.then((s) => void s?.destroy()),
    };
  } catch {
    return undefined;
  }
}

// The server started for `place` with `intent`, and whether its state directory was made for it;
// undefined when it could not be started (the command starts one itself, and reports why not).
function startServer(
  deps: EarlyDeps,
  place: ServerPlace,
  intent: SessionIntent,
): { started: AutoServer; madeStateDir: boolean } | undefined {
  try {
    const madeStateDir = !existsSync(place.stateDir);
    return { started: deps.startServer(place, intent), madeStateDir };
  } catch {
    return undefined;
  }
}

/** How long a server started early and not used is waited for, to serve or to exit, before it is left to its idle exit. */
const RETIRE_WAIT_MS = 15_000;
/** How often its socket is looked for meanwhile. */
const RETIRE_POLL_MS = 10;

/**
 * Asks a server started with an early intent that the command did not use (its config or own checks
 * failed, or it ran elsewhere) to exit, as the command does with one it started itself
 * (connect-matching.ts `abandon`): once it serves, `exitIfIdle` (reason `unused`) on a connection of
 * its own; an idle auto-started server agrees after it discarded the intent's agent. A server that
 * exits first (it failed as the command did, e.g. on an invalid config) needs nothing, but when the
 * state directory was made for it and holds only its log, both go: a command that failed leaves no
 * state behind. Never rejects.
 */
export async function retireServer(server: AutoServer, stateDir: string, madeStateDir: boolean): Promise<void> {
  try {
    let exitCode: number | null | undefined;
    void server.exited.then((code) => {
      exitCode = code;
    });
    const path = socketPath(stateDir);
    const deadline = Date.now() + RETIRE_WAIT_MS;
    while (exitCode === undefined && !existsSync(path) && Date.now() < deadline) await sleep(RETIRE_POLL_MS);
    if (exitCode === undefined && existsSync(path)) {
      await askToExit(path);
      return;
    }
    // Anything else in it (another command's server) is not this server's to remove.
    if (exitCode !== undefined && exitCode !== 0 && madeStateDir && readdirSync(stateDir).join() === 'orchestrator.log') {
      unlinkSync(logPath(stateDir));
      rmdirSync(stateDir);
    }
  } catch {
    // Gone already, refused, or something else was there: it exits by itself when idle.
  }
}

/** The request id of an early server's retirement (its own connection). */
const RETIRE_ID = 'early-retire';

// Sends `exitIfIdle` (reason `unused`) on a new connection and resolves at its answer, or when the
// connection ends or fails, at most RETIRE_WAIT_MS later.
function askToExit(path: string): Promise<void> {
  return new Promise((done) => {
    const socket = createConnection(path);
    const finish = (): void => {
      clearTimeout(timer);
      socket.destroy();
      done();
    };
    const timer = setTimeout(finish, RETIRE_WAIT_MS);
    socket.once('connect', () => {
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: RETIRE_ID, method: 'exitIfIdle', params: { reason: 'unused' } })}\n`);
    });
    // The answer is one line; the server exits (closing the connection) right after it when it agreed.
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (received.includes('\n')) finish();
    });
    socket.once('close', finish);
    socket.once('error', finish);
  });
}

// Connects and writes the intent request once connected; resolves undefined when the connect fails.
function connect(path: string, intent: SessionIntent): Promise<Socket | undefined> {
  return new Promise((resolveSocket) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: EARLY_INTENT_ID, method: 'intent', params: intent })}\n`);
      resolveSocket(socket);
    });
    socket.once('error', () => resolveSocket(undefined));
  });
}

/** What {@link scanRunArgs} reads from a `run` command line. */
export interface ScannedRun {
  /** `-c/--config`, as given. */
  config: string | undefined;
  flags: IntentFlags;
  prompt: string;
}

// The options of `run` (and the global ones) that take a value, by every spelling, and the flags they set.
const VALUE_OPTIONS: Readonly<Record<string, keyof IntentFlags | 'config' | 'ignored'>> = {
  '-c': 'config',
  '--config': 'config',
  '-w': 'workspace',
  '--workspace': 'workspace',
  '-m': 'model',
  '--model': 'model',
  '-e': 'effort',
  '--effort': 'effort',
  '-a': 'autonomy',
  '--autonomy': 'autonomy',
  '-t': 'title',
  '--title': 'title',
  '-A': 'adapter',
  '--adapter': 'adapter',
  '--request-key': 'ignored',
};
// Options without a value that change nothing of the intent.
const BOOLEAN_OPTIONS = new Set(['--json', '--verbose', '-d', '--detach', '--no-hint']);

/**
 * Reads a `run` command line the way the command's parser (commander) reads it, for the plain
 * cases only: `run` and one prompt, with global and `run` options given separately
 * (`-w dir`, `--workspace dir`, `--workspace=dir`). Anything else is left to the command, which
 * tells its intent itself: undefined for another command, an option it does not know here
 * (`--allow`/`--deny`, which the command checks first; the worktree options, which get no early
 * agent; `--help`; grouped short options; `--`), a value that looks like an option, or a prompt
 * missing or given twice. An option given twice keeps its last value, as in commander.
 */
export function scanRunArgs(args: readonly string[]): ScannedRun | undefined {
  const flags: IntentFlags = {};
  let config: string | undefined;
  const operands: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg.length > 1 && arg.startsWith('-')) {
      if (BOOLEAN_OPTIONS.has(arg)) continue;
      const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
      const name = equals > 0 ? arg.slice(0, equals) : arg;
      const key = VALUE_OPTIONS[name];
      if (key === undefined) return undefined;
      let value: string | undefined;
      if (equals > 0) value = arg.slice(equals + 1);
      else {
        i += 1;
        value = args[i];
      }
      if (value === undefined || (equals < 0 && value.length > 1 && value.startsWith('-'))) return undefined;
      if (key === 'config') config = value;
      else if (key !== 'ignored') flags[key] = value;
      continue;
    }
    operands.push(arg);
  }
  if (operands.length !== 2 || operands[0] !== 'run') return undefined;
  return { config, flags, prompt: operands[1]! };
}

/** Set to `0` to have `run` always load the command itself instead of handing it to the orchestrator. */
export const DELEGATE_ENV = 'ONE_WORKS_DELEGATE';

/** The exit code of a delegated command whose client got a second signal (as the command's own second Ctrl-C). */
const EXIT_INTERRUPTED = 130;
/** A first signal's grace before the client exits anyway (as the command's own installShutdownHandlers). */
const SIGNAL_GRACE_MS = 20_000;

/** How the client's standard streams look (what `command.run` tells the server). */
interface StreamFacts {
  isTTY: boolean;
  columns?: number;
}

/** The process a delegated run writes to and is signalled in (tests give their own). */
export interface DelegateIo {
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stdin: { isTTY?: boolean };
  /** Subscribes to SIGINT/SIGTERM; returns the unsubscribe. */
  onSignal(listener: (signal: 'SIGINT' | 'SIGTERM') => void): () => void;
}

// stdout and stderr as cli/stdio.ts's sinks: a handed run's client makes no Node stream for a pipe.
const PROCESS_IO: DelegateIo = {
  stdout: PROCESS_STDOUT,
  stderr: PROCESS_STDERR,
  stdin: {
    get isTTY() {
      return stdinIsTTY();
    },
  },
  onSignal(listener) {
    process.on('SIGINT', listener);
    process.on('SIGTERM', listener);
    return () => {
      process.off('SIGINT', listener);
      process.off('SIGTERM', listener);
    };
  },
};

/**
 * Hands a plain `run` to the orchestrator of its state directory, which runs the command itself
 * with this process's directory, environment and streams (cli/daemon/delegated-run.ts), and
 * resolves with its exit code once it is done, its output written here as it comes. The command's
 * 2 MB are then never loaded here: on a small machine that load takes CPU from the agent
 * starting meanwhile. Resolves undefined, with nothing written, when the command is the caller's
 * to run as before: another command line than {@link scanRunArgs} reads, a refused prompt, a
 * terminal that could show permission prompts (stdin and stderr TTYs, no --json), no orchestrator
 * listening, an older server, or a server that declined (another config or environment, a fleet,
 * any failure before the command reached it: the command then reports it itself). With
 * `ONE_WORKS_DELEGATE=0` it is never handed over. Never rejects.
 *
 * A first SIGINT/SIGTERM is passed on (the command cancels its turn and settles); a second one,
 * or none settled SIGNAL_GRACE_MS after the first, exits with 130 at once (the turn's cancel goes on).
 */
export function delegateRun(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  io: DelegateIo = PROCESS_IO,
): Promise<number | undefined> | undefined {
  try {
    const handed = handOver(args, env, cwd, io);
    if (!handed) return undefined;
    const path = socketPath(handed.located.stateDir);
    if (!existsSync(path)) return undefined;
    return runOn(path, handed.intent, handed.params, io);
  } catch {
    return undefined;
  }
}

/** How often the started server's socket is looked for in the first AUTO_START_FAST_POLL_MS of a `run`'s wait (a stat each). */
const STARTED_POLL_MS = 2;

/**
 * Hands a plain `run` to the server its early intent started (`seed.server`: none listened), as
 * {@link delegateRun} does to one that listens: waits for that server's socket while it runs (up
 * to AUTO_START_DEADLINE_MS from its spawn, saying so on stderr after 3 s and every 5 s, as the
 * command's own wait does), then runs the command there. The server's own intent (`serve
 * --intent`, its agent spawned as it starts) is the one the command takes, so none is told again.
 * The client so never loads the command's 2 MB while the server and its agent start on a small
 * machine, least of all on a loaded one, where that start takes seconds. Resolves undefined when
 * the command is the caller's to run (then with the seed, which still has the server): the same
 * cases as {@link delegateRun}, a server that exited (the command says why, or starts another),
 * one that did not listen by the deadline (the command fails at once naming it), or one that
 * declined. Never rejects.
 */
export function delegateStartedRun(
  seed: EarlySeed | undefined,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  io: DelegateIo = PROCESS_IO,
): Promise<number | undefined> | undefined {
  try {
    if (!seed?.server || seed.listening) return undefined;
    const handed = handOver(args, env, cwd, io);
    if (!handed || handed.located.stateDir !== seed.located.stateDir) return undefined;
    const { stateDir } = seed.located;
    const path = socketPath(stateDir);
    const notice = startWaitNotices(seed.server.startedAt, stateDir, (line) => void io.stderr.write(`${terminalSafe(line)}\n`));
    return listening(path, seed.server, notice).then((up) => (up ? runOn(path, undefined, handed.params, io) : undefined));
  } catch {
    return undefined;
  }
}

// Resolves true once `path` exists, false when `server` exits first or AUTO_START_DEADLINE_MS
// pass from its spawn; `notice` is called at each look (startWaitNotices).
function listening(path: string, server: AutoServer, notice: (server: AutoServer) => void): Promise<boolean> {
  return new Promise((settle) => {
    let exited = false;
    void server.exited.then(() => {
      exited = true;
    });
    const look = (): void => {
      const waited = Date.now() - server.startedAt;
      if (existsSync(path)) settle(true);
      else if (exited || waited >= AUTO_START_DEADLINE_MS) settle(false);
      else {
        notice(server);
        setTimeout(look, waited < AUTO_START_FAST_POLL_MS ? STARTED_POLL_MS : AUTO_START_SLOW_POLL_MS);
      }
    };
    look();
  });
}

/** What `command.run` sends (the server's CommandRunParamsSchema). */
interface HandedParams {
  args: string[];
  cwd: string;
  env: Record<string, string>;
  stdout: StreamFacts;
  stderr: StreamFacts;
}

// What a run handed to a server sends: undefined when the command line is the client's to run (see delegateRun).
function handOver(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
  io: DelegateIo,
): { located: LocatedState; intent: SessionIntent; params: HandedParams } | undefined {
  if (env[DELEGATE_ENV] === '0') return undefined;
  const scanned = scanRunArgs(args);
  if (!scanned) return undefined;
  checkPrompt(scanned.prompt);
  if (!args.includes('--json') && io.stderr.isTTY === true && io.stdin.isTTY === true) return undefined;
  const located = locateState({ ...(scanned.config ? { path: resolve(cwd, scanned.config) } : {}), cwd, env });
  if (!located) return undefined;
  const params = {
    args: absolutePaths(args, cwd),
    cwd,
    env: definedEnv(env),
    stdout: streamFacts(io.stdout),
    stderr: streamFacts(io.stderr),
  };
  return { located, intent: intentOf(scanned.flags, env, cwd), params };
}

/** The variables of `env` that are set (an environment as the wire carries it). */
export function definedEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function streamFacts(stream: { isTTY?: boolean; columns?: number }): StreamFacts {
  return { isTTY: stream.isTTY === true, ...(stream.columns ? { columns: stream.columns } : {}) };
}

// The command line with the values of -c/--config and -w/--workspace made absolute against `cwd`:
// the server resolves paths against its own directory.
function absolutePaths(args: readonly string[], cwd: string): string[] {
  const paths = new Set(['-c', '--config', '-w', '--workspace']);
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    if (equals > 0 && paths.has(arg.slice(0, equals))) out.push(`${arg.slice(0, equals)}=${resolve(cwd, arg.slice(equals + 1))}`);
    else if (paths.has(arg) && i + 1 < args.length) {
      out.push(arg, resolve(cwd, args[i + 1]!));
      i += 1;
    } else out.push(arg);
  }
  return out;
}

// Runs `params` on the server at `path`: resolves its exit code, or undefined when it declined
// (or could not take it) before the command reached it.
// The intent goes first on the connection: the agent starts while the server sets the command up,
// and the command takes it over (or it is discarded).
function runOn(path: string, intent: SessionIntent | undefined, params: HandedParams, io: DelegateIo): Promise<number | undefined> {
  return new Promise((settle) => {
    const socket = createConnection(path);
    let matched = false;
    let turn: LostTurn | undefined;
    const json = params.args.includes('--json');
    let done = false;
    let signalled = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const finish = (exitCode: number | undefined): void => {
      if (done) return;
      done = true;
      stopSignals();
      clearTimeout(graceTimer);
      socket.destroy();
      settle(exitCode);
    };
    const stopSignals = io.onSignal((signal) => {
      // Before the command runs for real, a signal ends this process as the command's own would.
      if (signalled || !matched) {
        finish(EXIT_INTERRUPTED);
        return;
      }
      signalled = true;
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 'command-signal', method: COMMAND_SIGNAL, params: { signal } })}\n`);
      graceTimer = setTimeout(() => finish(EXIT_INTERRUPTED), SIGNAL_GRACE_MS);
      graceTimer.unref();
    });
    socket.once('connect', () => {
      const told = intent ? `${JSON.stringify({ jsonrpc: '2.0', id: EARLY_INTENT_ID, method: 'intent', params: intent })}\n` : '';
      socket.write(`${told}${JSON.stringify({ jsonrpc: '2.0', id: COMMAND_RUN_ID, method: COMMAND_RUN, params })}\n`);
    });
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      for (let end = received.indexOf('\n'); end >= 0 && !done; end = received.indexOf('\n')) {
        const line = received.slice(0, end);
        received = received.slice(end + 1);
        onMessage(line);
      }
    });
    const onMessage = (line: string): void => {
      let message: { id?: unknown; method?: unknown; params?: { stream?: unknown; text?: unknown }; result?: unknown; error?: unknown };
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      if (message.method === COMMAND_MATCHED) matched = true;
      else if (message.method === COMMAND_TURN) turn = turnOf(message.params);
      else if (message.method === COMMAND_OUTPUT) {
        const { stream, text } = message.params ?? {};
        if (typeof text === 'string') (stream === 'stderr' ? io.stderr : io.stdout).write(text);
      } else if (message.id === COMMAND_RUN_ID) {
        const exitCode = (message.result as { exitCode?: unknown } | undefined)?.exitCode;
        // Declined, or an older server that has no such method: the caller runs the command.
        finish(typeof exitCode === 'number' && matched ? exitCode : matched ? 1 : undefined);
      }
    };
    const onClosed = (): void => {
      if (done) return;
      // Gone before the command ran for real: the caller runs it. Gone while it ran: said, as the command's own client would.
      if (matched) io.stderr.write(lostConnection(turn, json));
      finish(matched ? EXIT_CONNECTION_CLOSED : undefined);
    };
    socket.once('close', onClosed);
    socket.on('error', () => undefined);
  });
}

// The turn a `command.turn` names, when it is well formed.
function turnOf(params: unknown): LostTurn | undefined {
  const { sessionId, runId, pid } = (params ?? {}) as { sessionId?: unknown; runId?: unknown; pid?: unknown };
  if (typeof sessionId !== 'string' || typeof runId !== 'string') return undefined;
  return { sessionId, runId, ...(typeof pid === 'number' ? { pid } : {}) };
}

// What the command's own client prints when its orchestrator goes away while it runs (as
// cli/main.ts prints a `connection_closed` error: `one-works: …`, or its JSON line with --json).
function lostConnection(turn: LostTurn | undefined, json: boolean): string {
  const message = turn
    ? lostTurnLines(turn).join('\n')
    : 'the orchestrator closed the connection before the run ended (its turn may go on: see `one-works sessions`)';
  return json ? `${JSON.stringify({ error: { code: 'connection_closed', message } })}\n` : `one-works: ${message}\n`;
}

/** The request id of a delegated command. */
const COMMAND_RUN_ID = 'command-run';
/** The exit code of a `connection_closed` error (cli/exit-codes.ts: an agent-side failure). */
const EXIT_CONNECTION_CLOSED = 5;

/**
 * In a server started with an intent (`[--config FILE] serve --auto --intent JSON`, as
 * spawnAutoServer starts it), spawns that intent's agent now, before the command's bundle loads,
 * from the recipe the previous server of its state directory kept, when it is one for this very
 * build, config text, intent and environment (core/session/launch-ahead.ts); the orchestrator
 * adopts it when its own launch is the same. cli/bin.cjs calls it with the build's hash. Never throws.
 */
export function launchAheadForServer(args: readonly string[], env: NodeJS.ProcessEnv, cwd: string, build: string): void {
  try {
    if (!args.includes('serve') || !args.includes('--auto')) return;
    const intent = valueAfter(args, '--intent');
    if (intent === undefined) return;
    const config = valueAfter(args, '--config') ?? valueAfter(args, '-c');
    const located = locateState({ ...(config ? { path: resolve(cwd, config) } : {}), cwd, env });
    if (!located) return;
    const configText = located.configPath ? readFileSync(located.configPath, 'utf8') : undefined;
    launchAhead(located.stateDir, { configPath: located.configPath, configText, intent }, build, env);
  } catch {
    // Nothing launched ahead: the orchestrator launches the agent as always.
  }
}

// The value after `option` on a command line (its last occurrence), if any.
function valueAfter(args: readonly string[], option: string): string | undefined {
  const at = args.lastIndexOf(option);
  return at >= 0 ? args[at + 1] : undefined;
}
