import { setTimeout as sleep } from 'node:timers/promises';
import { currentView, type ProcessView, ViewDeclined } from '../process-view.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import type { CliContext } from '../context.js';
import { type ConnectOptions, connectOrchestrator, type OrchestratorClient, type ServerHello } from './client.js';
import { differingParts, environmentFingerprint } from './fingerprint.js';

/** Connections tried when a server closes them at once (it was exiting). */
const CONNECT_ATTEMPTS = 5;
/** How long to wait for an idle auto-started server to exit after agreeing to. */
const EXIT_DEADLINE_MS = 15_000;

type MatchingContext = Pick<CliContext, 'stateDir' | 'configPath' | 'cwd' | 'env' | 'config' | 'explicitKeys' | 'approvedRoots' | 'out'>;

/**
 * Connects to the state directory's orchestrator (starting one when none runs) and makes sure
 * it runs with this command's config and environment, the way build daemons do: both sides
 * compute {@link environmentFingerprint} and only the hash is compared. On a mismatch, an
 * auto-started server that nothing else uses is asked to exit and a fresh one is started;
 * otherwise this throws `orchestrator_mismatch` saying how to restart it. The caller closes the
 * returned client.
 */
export async function connectMatchingOrchestrator(
  ctx: MatchingContext,
  options: Pick<ConnectOptions, 'onAutoStart' | 'onAttempted' | 'signal' | 'early' | 'intent' | 'spawned'> = {},
): Promise<OrchestratorClient> {
  // Computed once a server answered: a server to start is started without waiting for it.
  let fingerprint: string | undefined;
  let restarted = false;
  // Run by the orchestrator for a thin client (cli/process-view.ts): it uses that very server when
  // it matches, and otherwise starts, restarts or waits for none (the client then runs the command).
  const view = currentView();
  if (view) return connectForView(ctx, options, view);
  for (let attempt = 1; ; attempt += 1) {
    // The connection opened early (a `run`'s intent told on it), or the server started early, is the first attempt's only.
    const client = await connectOrchestrator(ctx, {
      autoStart: true,
      ...options,
      ...(attempt === 1 ? {} : { early: undefined, spawned: undefined }),
    });
    let hello: ServerHello;
    try {
      // The hello that confirmed the connection (connectOrchestrator) answers this too: one round trip.
      hello = client.greeting ?? (await client.hello());
    } catch (error) {
      await client.close();
      // A server that was exiting when this client connected (idle exit) closes the connection.
      if (isOneWorksError(error, ERROR_CODES.CONNECTION_CLOSED) && attempt < CONNECT_ATTEMPTS) {
        await sleep(100);
        continue;
      }
      throw error;
    }
    try {
      fingerprint ??= environmentFingerprint(ctx);
      if (hello.fingerprint === fingerprint) return client;
      // One restart only: a second mismatch means someone else keeps starting servers.
      if (!restarted && hello.auto && (await client.exitIfIdle('mismatch'))) {
        restarted = true;
        ctx.out.info(
          `restarting the background orchestrator (pid ${hello.pid}): it ran with a different ${describeDifference(ctx, hello)}`,
        );
        await client.close();
        await waitForExit(hello.pid, options.signal);
        continue;
      }
    } catch (error) {
      await client.close();
      throw error;
    }
    await client.close();
    throw mismatch(ctx, hello);
  }
}

// The matching client of a command run for a thin client, whose `view` is told so; ViewDeclined when
// none listens or the one that does runs with another config or environment.
async function connectForView(
  ctx: MatchingContext,
  options: Pick<ConnectOptions, 'onAttempted' | 'signal' | 'early'>,
  view: ProcessView,
): Promise<OrchestratorClient> {
  // Its fingerprint is worked out as for a client's, then it stops: it reaches no orchestrator.
  if (view.rehearsal) {
    environmentFingerprint(ctx);
    throw new ViewDeclined('a rehearsal');
  }
  let client: OrchestratorClient;
  try {
    client = await connectOrchestrator(ctx, { autoStart: false, ...options, intent: undefined, spawned: undefined });
  } catch {
    throw new ViewDeclined('no orchestrator listens for its state directory');
  }
  try {
    const hello = client.greeting ?? (await client.hello());
    if (hello.fingerprint !== environmentFingerprint(ctx))
      throw new ViewDeclined('the orchestrator runs with another config or environment');
    view.matched();
    return client;
  } catch (error) {
    await client.close();
    throw error instanceof ViewDeclined ? error : new ViewDeclined('its orchestrator did not answer');
  }
}

/** A connection to the orchestrator under way, begun before the command's own checks: see {@link beginMatchingOrchestrator}. */
export interface PendingOrchestrator {
  /** The matching client, as {@link connectMatchingOrchestrator} gives it (and rejects); the caller closes it. */
  readonly client: Promise<OrchestratorClient>;
  /**
   * Settles (never rejects) once the first connection attempt is decided: a server accepted it,
   * or one is being started, or the connection failed. A command awaits it before its own checks,
   * whose module loads would otherwise hold a server's start back.
   */
  readonly attempted: Promise<void>;
  /**
   * Gives the connection up, for a command that failed its own checks: no server is started from
   * now on, the client is closed when it comes, and a server this connection started already is
   * first asked to exit if nothing else uses it (a server no command used would otherwise wait out
   * `orchestrator.idleExitMs`). Never throws.
   */
  abandon(): Promise<void>;
}

/**
 * Starts {@link connectMatchingOrchestrator} at once, so that the orchestrator answers (or starts,
 * when none runs) while the command does its own checks; `client` is awaited once they passed,
 * `abandon` called when one failed. Its failure is the caller's to report (or to drop, on abandon).
 */
export function beginMatchingOrchestrator(
  ctx: MatchingContext,
  intent: Pick<ConnectOptions, 'early' | 'intent' | 'spawned'> = {},
): PendingOrchestrator {
  let started = false;
  const given = new AbortController();
  let onAttempted: () => void = () => undefined;
  const attempted = new Promise<void>((resolve) => {
    onAttempted = resolve;
  });
  const client = connectMatchingOrchestrator(ctx, {
    ...intent,
    onAutoStart: () => {
      started = true;
    },
    onAttempted,
    signal: given.signal,
  });
  // Handled here too: a command that fails its own checks first may never await it.
  client.then(onAttempted, onAttempted);
  return {
    client,
    attempted,
    abandon: async () => {
      given.abort();
      const connected = await client.catch(() => undefined);
      if (!connected) return;
      try {
        if (started) await connected.exitIfIdle('unused');
      } catch {
        // The server is gone already, or refused: nothing of this command's is left to stop.
      } finally {
        await connected.close().catch(() => undefined);
      }
    },
  };
}

/**
 * The names (never values) of the variables and config keys where this command and the server
 * differ, e.g. `environment variable LANG, config key adapters.droid.model`; a server without
 * digests (an older one) is only said to differ.
 */
export function describeDifference(ctx: MatchingContext, hello: Pick<ServerHello, 'digestKey' | 'digests'>): string {
  if (hello.digestKey === undefined || hello.digests === undefined) return 'config or environment';
  const names = differingParts(ctx, { key: hello.digestKey, digests: hello.digests });
  const env = names.filter((n) => n.startsWith('env ')).map((n) => n.slice(4));
  const keys = names.filter((n) => n.startsWith('config ') && n !== 'config file').map((n) => n.slice(7));
  const other = names.filter((n) => n === 'config file' || n === 'approved roots' || n === 'one-works version');
  const said = [
    ...(env.length > 0 ? [`environment ${env.length === 1 ? 'variable' : 'variables'} ${env.join(', ')}`] : []),
    ...(keys.length > 0 ? [`config ${keys.length === 1 ? 'key' : 'keys'} ${keys.join(', ')}`] : []),
    ...other.map((n) =>
      n === 'config file' && keys.length === 0 ? 'config file (its path or text)' : n === 'one-works version' ? 'One Works version' : n,
    ),
  ].filter((part) => part !== 'config file');
  return said.length > 0 ? said.join('; ') : 'config or environment';
}

function mismatch(ctx: MatchingContext, hello: ServerHello): OneWorksError {
  const stateDir = ctx.stateDir;
  const busy = hello.live + hello.queued > 0 || hello.clients > 1;
  const why = !hello.auto
    ? 'it was started with `one-works serve`'
    : busy
      ? `it is busy (${hello.live} live and ${hello.queued} queued turns, ${hello.clients - 1} other clients)`
      : 'it did not agree to exit';
  return new OneWorksError(
    ERROR_CODES.ORCHESTRATOR_MISMATCH,
    `the orchestrator of ${stateDir} (pid ${hello.pid}) runs with a different configuration or environment than this command (it differs in: ${describeDifference(ctx, hello)}), and ${why}. ` +
      `Turns it runs would not see your current config or environment variables. Stop it (\`kill -TERM ${hello.pid}\`, or Ctrl-C its \`one-works serve\`) once its turns are done, then run this command again.`,
    { data: { pid: hello.pid, auto: hello.auto, live: hello.live, queued: hello.queued } },
  );
}

// The old server releases the owner lock only after it exited its shutdown; a new one started
// earlier would lose the owner race and leave this client without a server.
async function waitForExit(pid: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + EXIT_DEADLINE_MS;
  while (Date.now() < deadline) {
    // Given up (the command failed its own checks): the old server exits by itself, no new one is needed.
    if (signal?.aborted) {
      throw new OneWorksError(ERROR_CODES.REQUEST_CANCELLED, `the orchestrator (pid ${pid}) is exiting; no new one was started`);
    }
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await sleep(50);
  }
  throw new OneWorksError(
    ERROR_CODES.ORCHESTRATOR_MISMATCH,
    `the orchestrator (pid ${pid}) agreed to exit but is still running after ${EXIT_DEADLINE_MS / 1000} s`,
  );
}
