import { spawn } from 'node:child_process';
import { closeSync, fchmodSync, fstatSync, mkdirSync, openSync } from 'node:fs';
import { deferCaCerts } from '../../core/install/extra-ca.js';
import { BIN_PATH } from '../package-root.js';
import type { SessionIntent } from '../../core/orchestrator/intent.js';
// The module itself, not wire.ts (zod): `run`'s early bundle (cli/early-intent.ts) starts servers too.
import { logPath } from './socket-path.js';

/** Where a server is started: its state directory, the config file it loads, its working directory and environment. */
export interface ServerPlace {
  stateDir: string;
  configPath: string | undefined;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** A background server just started. */
export interface AutoServer {
  pid: number | undefined;
  /** Settles with its exit code if it exits while this process runs (null: killed, or never started). */
  exited: Promise<number | null>;
  /** Size of orchestrator.log before it started: what it writes comes after. */
  logOffset: number;
  /** When it was spawned (Date.now()): a client's wait for it to serve counts from here, whoever waits. */
  startedAt: number;
}

/**
 * How long a client waits for a server it started that runs but does not serve yet. On a 2-core
 * machine, `run` to a listening socket took 0.2-1 s idle and up to 14 s under heavy load (the
 * server itself listening 0.4-2.9 s after its spawn), and a CI run once saw a server not listening
 * 10 s after its spawn, the deadline before: a server that runs is starting and is waited for. One
 * that exits is noticed at once, so this bounds only one that hangs.
 */
export const AUTO_START_DEADLINE_MS = 60_000;
/**
 * After how long a client still waiting for the server it started says so on stderr (a start
 * that takes this long is one that gets little CPU), then again every AUTO_START_NOTICE_EVERY_MS.
 */
const AUTO_START_NOTICE_MS = 3_000;
const AUTO_START_NOTICE_EVERY_MS = 5_000;
/** How long after the spawn a waiting client looks for the socket every few ms, then every AUTO_START_SLOW_POLL_MS. */
export const AUTO_START_FAST_POLL_MS = 2_000;
export const AUTO_START_SLOW_POLL_MS = 100;

/**
 * What a client waiting for a server it started since `since` (its spawn) says through `say`
 * (cli/daemon/client.ts, cli/early-intent.ts): the returned function, called at each look, says it
 * after AUTO_START_NOTICE_MS, then every AUTO_START_NOTICE_EVERY_MS, naming the server waited for.
 */
export function startWaitNotices(since: number, stateDir: string, say: (line: string) => void): (server: Pick<AutoServer, 'pid'>) => void {
  let noticeAt = AUTO_START_NOTICE_MS;
  return (server) => {
    const waited = Date.now() - since;
    if (waited < noticeAt) return;
    noticeAt = waited + AUTO_START_NOTICE_EVERY_MS;
    say(
      `waiting for the background orchestrator (pid ${server.pid}) to start, ${Math.round(waited / 1000)} s so far (its output: ${logPath(stateDir)})`,
    );
  };
}

/**
 * A background server runs with Node's defaults, as one started by hand: no V8 flag. Any flag on
 * the command line costs Node the embedded code cache of its own modules (V8's flag hash differs),
 * which every builtin the server loads on its way to the intent's agent pays for (node:zlib,
 * node:fs/promises, node:child_process, node:net: 2-5 ms each instead of under 1 ms). Earlier
 * versions ran it with `--no-flush-bytecode` (an idle server kept its compiled code) and
 * `--min-semi-space-size=16` (a start-up without scavenges); measured by the server's own marks
 * (its start to the spawn of the intent's droid, 5 rounds each, this 2-core machine), with neither
 * it reached the spawn at 207-216 ms, with either one at 222-247 ms. The `run` after 15 s of idle
 * is measured by the bench (`npm run bench`, docs/benchmarks.md), for a server started by hand
 * (the goal row) and for a background one.
 */

/**
 * Starts `one-works [--config FILE] serve --auto [--intent JSON]` for `ctx.stateDir` in the background
 * (with `intent`, what the command is about to create: the server starts its agent as it starts), with its
 * stdout and stderr appended to `<state>/orchestrator.log` (mode 0600).
 *
 * This is the one place where One Works starts a process it does not supervise: the server is
 * spawned detached (own process group) and unref'd, because it must outlive the command that
 * started it. It owns itself: it takes the state directory's owner lock (a loser of a start
 * race exits quietly), stops its own children on SIGTERM/SIGINT, and exits by itself after
 * `orchestrator.idleExitMs` without clients or turns.
 *
 * Synchronous, as its file system calls: they are on the path to the server's start, and the
 * calling command waits for that server anyway; each asynchronous call would be a thread-pool round
 * trip (milliseconds each on a loaded machine) before the spawn. Throws what they throw (a state
 * directory that cannot be made). Loads no schema: `run`'s early bundle calls it too.
 */
export function spawnAutoServer(ctx: ServerPlace, intent?: SessionIntent): AutoServer {
  mkdirSync(ctx.stateDir, { recursive: true, mode: 0o700 });
  const log = openSync(logPath(ctx.stateDir), 'a', 0o600);
  try {
    const logOffset = fstatSync(log).size;
    fchmodSync(log, 0o600);
    // The intent (no secret in it: adapter, workspace, settings, title, TERM/COLORTERM/NO_COLOR) goes as an argument.
    const told = intent ? ['--intent', JSON.stringify(intent)] : [];
    const args = [BIN_PATH, ...(ctx.configPath ? ['--config', ctx.configPath] : []), 'serve', '--auto', ...told];
    const startedAt = Date.now();
    const child = spawn(process.execPath, args, {
      cwd: ctx.cwd,
      // Its start skips parsing NODE_EXTRA_CA_CERTS (~60 ms of CPU on the path to the first turn);
      // it sets the variable again at once and gives the certificates to its installer (extra-ca.ts).
      env: deferCaCerts(ctx.env),
      detached: true,
      stdio: ['ignore', log, log],
    });
    // Listening does not keep this process alive (unref); it tells a waiting client that the
    // server exited before it served, so the client need not wait out its deadline.
    const exited = new Promise<number | null>((resolve) => {
      child.once('exit', (code) => resolve(code));
      child.once('error', () => resolve(null));
    });
    child.unref();
    return { pid: child.pid, exited, logOffset, startedAt };
  } finally {
    closeSync(log);
  }
}
