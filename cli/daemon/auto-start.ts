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
}

/**
 * Node flags of a background server. `--no-flush-bytecode`: by default V8 drops the bytecode of a
 * function not run for a while (at some of its collections), so that a server idle between two
 * commands compiled again, during the next `run` and while its agent started, what its start-up
 * and its idle-time warm-up (serve-main.ts) had compiled: 6 paired rounds on fresh servers idle
 * 15 s put that `run` at 1.19-1.20x of the raw client with flushing, 1.13x without. The bytecode
 * kept is that of the code the server ran. A flag of the command line: set at run time (v8's
 * setFlagsFromString) it changed nothing measurable but the key of the code cache.
 * `--min-semi-space-size=16`: the young generation starts at 16 MB (V8's largest by default
 * here) instead of 1 MB doubling as it fills, so that the start-up (the bundle's modules, the
 * config, the intent's agent) runs without the six scavenges and the mark-compact (some 12 ms
 * of a single core, before the agent's spawn) that the small heap cost it. Paired rounds of the
 * auto-started `run` (fresh state each, 10-16 rounds, four runs) put it 9-39 ms faster; the
 * server's RSS as its socket appears is some 6 MB higher (66.5 against 60.8 MB), the same after
 * 15 s idle (66.7 against 65.9 MB). Any V8 flag on the command line also costs Node the
 * embedded code cache of its own modules (V8's flag hash differs): node:child_process takes
 * 4.3-4.7 ms to load instead of 1.4 ms, node:zlib 1.0 instead of 0.45. Measured whole, the
 * auto-started `run` with no flag, with both and with only this one came out the same within
 * noise (1.307x, 1.300x, 1.323x of the raw client, 14 paired rounds in one run); both are kept
 * for the idle server's sake (the first). A server started by hand (`one-works serve`) runs with
 * Node's defaults.
 */
const SERVER_NODE_FLAGS = ['--no-flush-bytecode', '--min-semi-space-size=16'];

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
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...args], {
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
    return { pid: child.pid, exited, logOffset };
  } finally {
    closeSync(log);
  }
}
