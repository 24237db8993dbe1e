import { existsSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Autonomy } from '../core/adapter.js';
import { type LocatedState, locateState } from '../core/config/locate.js';
import type { SessionIntent } from '../core/orchestrator/intent.js';
// The modules themselves (no index.js): this file is a bundle of its own, loaded before the command's.
import { checkPrompt } from '../core/orchestrator/session-metadata.js';
import { presentationOf } from '../core/process/env.js';
import { type AutoServer, type ServerPlace, spawnAutoServer } from './daemon/auto-start.js';
import { logPath, socketPath } from './daemon/socket-path.js';

/**
 * `run`'s intent, told before the command's bundle loads. cli/bin.cjs loads this module as a
 * bundle of its own (dist/cli/early-intent.cjs, some 0.3 MB against the command's 3.4 MB) and
 * calls {@link tellEarlyIntent} with the command line: when it is a plain `run` whose orchestrator
 * listens, the intent is written on a new connection at once, so that the agent starts while the
 * command's bundle loads, and the connection is handed to the command (`main`'s `earlyIntent`).
 * The command parses its arguments itself and takes the connection over only when its own intent
 * is the same (cli/commands/run-intent.ts); otherwise it tells its intent on it again. When no
 * orchestrator listens, the server is started here with the intent (`serve --auto --intent`, as
 * the command would start it once loaded), and the command waits for that one.
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
