import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { assertFileBackend } from '../fleet/backend.js';
import { createContext, type CliContext } from '../context.js';
import { type ServerHello, tryConnect } from '../daemon/client.js';
import { logPath, socketPath } from '../daemon/wire.js';
import { EXIT } from '../exit-codes.js';
import type { CommandBody, GlobalOptions } from '../main.js';

/** What `server status` reports (`--json`: this object). */
export interface ServerStatus {
  running: boolean;
  stateDir: string;
  socket: string;
  log: string;
  pid?: number;
  /** Started by a client (`serve --auto`, exits when idle) rather than by `one-works serve`. */
  auto?: boolean;
  startedAt?: string | null;
  live?: number;
  queued?: number;
  /** Clients connected besides the one asking. */
  otherClients?: number;
}

/**
 * `server status` and `server stop`: the state directory's orchestrator, visible and stoppable
 * without knowing its pid. Neither starts one.
 */
export function registerServerCommands(program: Command, run: (body: CommandBody) => Promise<void>): void {
  const server = program.command('server').description("show or stop the state directory's orchestrator (never starts one)");
  server
    .command('status')
    .description('whether an orchestrator runs for the state directory: pid, since when, auto-started or not, load')
    .action((_o: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        assertFileBackend(ctx);
        const status = await serverStatus(ctx);
        ctx.out.result(status, () => statusText(status));
        return EXIT.ok;
      }),
    );
  server
    .command('stop')
    .description('stop the orchestrator as SIGTERM would (its live and queued turns are cancelled) and wait until it is gone')
    .action((_o: unknown, cmd: Command) =>
      run(async () => {
        const ctx = await createContext(cmd.optsWithGlobals<GlobalOptions>());
        assertFileBackend(ctx);
        const stopped = await stopServer(ctx);
        ctx.out.result({ stopped: stopped !== undefined, stateDir: ctx.stateDir, ...(stopped ? { pid: stopped.pid } : {}) }, () =>
          stopped
            ? `stopped the orchestrator of ${ctx.stateDir} (pid ${stopped.pid}${stopped.live + stopped.queued > 0 ? `; ${stopped.live} live and ${stopped.queued} queued turns cancelled` : ''})`
            : `no orchestrator is running for ${ctx.stateDir}`,
        );
        return EXIT.ok;
      }),
    );
}

/** The orchestrator's status as its `hello` tells it; `running: false` when nothing answers on the socket. */
export async function serverStatus(ctx: Pick<CliContext, 'stateDir'>): Promise<ServerStatus> {
  const base = { stateDir: ctx.stateDir, socket: socketPath(ctx.stateDir), log: logPath(ctx.stateDir) };
  const client = await tryConnect(base.socket, { defaultTimeoutMs: 10_000 });
  if (!client) return { running: false, ...base };
  try {
    const hello = await client.hello();
    return {
      running: true,
      ...base,
      pid: hello.pid,
      auto: hello.auto,
      startedAt: hello.startedAt ?? null,
      live: hello.live,
      queued: hello.queued,
      otherClients: Math.max(0, hello.clients - 1),
    };
  } catch {
    // It closed the connection at once: it was exiting.
    return { running: false, ...base };
  } finally {
    await client.close();
  }
}

function statusText(status: ServerStatus): string {
  if (!status.running) return `orchestrator of ${status.stateDir}: not running (commands that submit turns start one)`;
  return [
    `orchestrator of ${status.stateDir}: running`,
    `  pid ${status.pid}, ${status.auto ? 'auto-started (exits when idle)' : 'started by `one-works serve`'}${status.startedAt ? `, since ${status.startedAt}` : ''}`,
    `  ${status.live} live and ${status.queued} queued turns, ${status.otherClients} other clients connected`,
    `  socket ${status.socket}`,
    `  log    ${status.log}`,
  ].join('\n');
}

/** How long `server stop` waits for the orchestrator to exit, beyond its cancel grace. */
const STOP_WAIT_MS = 30_000;

// Asks the server to stop and waits for its pid to go; undefined when none runs.
async function stopServer(ctx: CliContext): Promise<ServerHello | undefined> {
  const client = await tryConnect(socketPath(ctx.stateDir), { defaultTimeoutMs: 10_000 });
  if (!client) return undefined;
  let hello: ServerHello;
  try {
    hello = await client.hello();
    if (!(await client.shutdown())) {
      throw new OneWorksError(ERROR_CODES.ORCHESTRATOR_STOPPING, `the orchestrator (pid ${hello.pid}) did not agree to stop`);
    }
  } catch (error) {
    // Closed at once: it was exiting already.
    if (error instanceof OneWorksError && error.code === ERROR_CODES.CONNECTION_CLOSED) return undefined;
    throw error;
  } finally {
    await client.close();
  }
  const waitMs = ctx.config.orchestrator.cancelGraceMs * 2 + STOP_WAIT_MS;
  const deadline = Date.now() + waitMs;
  while (Date.now() < deadline) {
    if (!alive(hello.pid)) return hello;
    await sleep(50);
  }
  throw new OneWorksError(
    ERROR_CODES.ORCHESTRATOR_STOPPING,
    `the orchestrator (pid ${hello.pid}) is still stopping after ${Math.round(waitMs / 1000)} s; see ${logPath(ctx.stateDir)}, or \`kill -KILL ${hello.pid}\``,
    { data: { pid: hello.pid } },
  );
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
