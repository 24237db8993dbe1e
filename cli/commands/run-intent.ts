import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { locateState } from '../../core/config/load.js';
import { currentView } from '../process-view.js';
import type { SessionIntent } from '../../core/orchestrator/intent.js';
import type { AutoServer } from '../daemon/auto-start.js';
import { adoptSocket, type OrchestratorClient, tryConnect } from '../daemon/client.js';
import { socketPath } from '../daemon/wire.js';
import { type EarlySeed, intentOf, sameIntent } from '../early-intent.js';
import type { GlobalOptions } from '../main.js';
import type { TurnFlags } from './run.js';

/**
 * A new `run`'s intent, told before the command loads its config (see SessionIntent): the
 * state directory is located the way the config load will find it, and when its orchestrator
 * listens the intent goes out on a connection at once, so that the agent starts while this
 * process loads, validates and checks. When none listens, the intent went with the spawn of the
 * server cli/bin.cjs started already (`connectOrchestrator`'s `spawned`), or goes with the spawn of
 * the one the command starts (`connectOrchestrator`'s `intent`).
 */
export interface EarlyIntent {
  intent: SessionIntent;
  /**
   * Settles once the intent is on its way (written to the connection, or there is none to write
   * on), at most INTENT_CONNECT_WAIT_MS after the tell: the command awaits it before loading its
   * config, whose synchronous work would otherwise hold the connect's callback, and the intent,
   * until it is done.
   */
  ready: Promise<void>;
  /**
   * The options of `beginMatchingOrchestrator` for a command whose loaded config has `stateDir`:
   * the connection the intent went on, or the server started with it (when the same state
   * directory), and the intent for a server it starts. For another state directory the connection
   * is closed, or that server asked to exit (either way its agent is discarded), and only the
   * intent goes on.
   */
  connectOptions(stateDir: string): { early?: Promise<OrchestratorClient | undefined>; intent: SessionIntent; spawned?: AutoServer };
  /**
   * Closes the connection, or asks the server started with the intent to exit (the command failed
   * before it used them, or runs without an orchestrator): the agent is discarded. Resolves once
   * that is done.
   */
  close(): Promise<void>;
}

/** The longest a command waits for its intent's connection before going on (a local socket connects in about a millisecond). */
const INTENT_CONNECT_WAIT_MS = 20;

/**
 * Tells the intent of `run` with `flags`, or undefined when a `run` with them gets no early agent
 * (a worktree: the orchestrator makes one first) or the state directory cannot be located early.
 * With `seed` (the intent cli/bin.cjs told before this command loaded, see cli/early-intent.ts),
 * its location is reused, and its connection taken over when it reached this state directory's
 * orchestrator: as it is when its intent is this one, else with this intent told on it again (the
 * server then discards the agent of the first). When it started a server (none listened), the
 * command waits for that one. Without a seed, the socket is looked for again here. Never throws:
 * whatever fails here, the command goes on as without it.
 */
export function tellIntent(
  globals: GlobalOptions,
  env: NodeJS.ProcessEnv,
  cwd: string,
  flags: TurnFlags,
  seed?: EarlySeed,
): EarlyIntent | undefined {
  // A seed's server is asked to exit here without being awaited (the read of cli/early-intent.ts
  // starts none for these lines): its connection and timers keep this process until it is done.
  if (flags.worktree !== undefined || flags.base || flags.branch || flags.includeUncommitted) {
    void seed?.discard();
    return undefined;
  }
  // The seed was located from the same config argument, directory and environment: the same answer.
  const located =
    seed && seed.config === globals.config
      ? seed.located
      : locateState({ ...(globals.config ? { path: resolve(cwd, globals.config) } : {}), cwd, env });
  if (!located) {
    void seed?.discard();
    return undefined;
  }
  const intent = intentOf(flags, env, cwd);
  const path = socketPath(located.stateDir);
  if (seed && seed.located.stateDir !== located.stateDir) {
    const discarded = seed.discard();
    return earlyIntent(intent, located.stateDir, { ...listen(path, intent), discarded });
  }
  // The server started with the seed's intent: the command waits for it. Its first createSession
  // takes that agent when it matches; one that does not (the command read other flags) discards it.
  if (seed?.server) return earlyIntent(intent, located.stateDir, { server: seed.server, discard: () => seed.discard() });
  if (seed?.listening) {
    const told = sameIntent(seed.intent, intent);
    const client = seed.socket.then(
      async (socket) => {
        if (!socket) return undefined;
        const connected = await adoptSocket(socket, path, { intentOpen: true });
        // Not awaited, as below: the server replaces the seed's intent with this one.
        if (!told) connected.intent?.(intent).catch(() => undefined);
        return connected;
      },
      () => undefined,
    );
    return earlyIntent(intent, located.stateDir, { client, ready: Promise.resolve() });
  }
  return earlyIntent(intent, located.stateDir, listen(path, intent));
}

// The intent told on a connection to the server listening at `path` (looked for again here), or,
// without a socket file (nothing listens), none: the intent then goes with the server's spawn.
function listen(path: string, intent: SessionIntent): { client: Promise<OrchestratorClient | undefined>; ready: Promise<void> } {
  if (!existsSync(path) || currentView()?.rehearsal) return { client: Promise.resolve(undefined), ready: Promise.resolve() };
  let sent: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    sent = resolve;
  });
  const client = tryConnect(path).then(
    (connected) => {
      // Not awaited: the answer (or an older server's refusal) changes nothing here. A command the
      // orchestrator runs for a client takes over the intent that client told (cli/process-view.ts).
      const handed = currentView()?.handedIntent;
      if (handed !== undefined) connected?.adoptIntent?.(handed).catch(() => undefined);
      else connected?.intent?.(intent).catch(() => undefined);
      sent();
      return connected;
    },
    () => {
      sent();
      return undefined;
    },
  );
  return { client, ready };
}

/** How the intent reaches the orchestrator of the state directory the command located. */
type Telling =
  /** On `client` (undefined: none listens, the intent goes with the spawn of the server the command starts), told once `ready`. */
  | { client: Promise<OrchestratorClient | undefined>; ready: Promise<void>; discarded?: Promise<void> }
  /** With the server the seed started, which the command waits for (or, unused, asks to exit with `discard`). */
  | { server: AutoServer; discard: () => Promise<void> };

// The EarlyIntent of `intent` for the orchestrator of `stateDir`, told as `telling` says.
function earlyIntent(intent: SessionIntent, stateDir: string, telling: Telling): EarlyIntent {
  let used = false;
  let retiring: Promise<void> | undefined;
  if ('server' in telling) {
    const { server, discard } = telling;
    return {
      intent,
      ready: Promise.resolve(),
      connectOptions(loadedStateDir) {
        used = true;
        if (loadedStateDir === stateDir) return { intent, spawned: server };
        retiring = discard();
        return { intent };
      },
      async close() {
        if (!used) {
          used = true;
          retiring = discard();
        }
        await retiring;
      },
    };
  }
  const { client, ready, discarded } = telling;
  return {
    intent,
    // Bounded: a server that does not accept at once holds the command no longer than this.
    ready: Promise.race([ready, sleep(INTENT_CONNECT_WAIT_MS, undefined, { ref: false })]).then(() => undefined),
    connectOptions(loadedStateDir) {
      used = true;
      if (loadedStateDir === stateDir) return { early: client, intent };
      void client.then((connected) => connected?.close()).catch(() => undefined);
      return { intent };
    },
    async close() {
      await discarded;
      if (used) return;
      used = true;
      await client.then((connected) => connected?.close()).catch(() => undefined);
    },
  };
}
