import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { locateState } from '../../core/config/load.js';
import type { SessionIntent } from '../../core/orchestrator/intent.js';
import { adoptSocket, type OrchestratorClient, tryConnect } from '../daemon/client.js';
import { socketPath } from '../daemon/wire.js';
import { type EarlySeed, intentOf, sameIntent } from '../early-intent.js';
import type { GlobalOptions } from '../main.js';
import type { TurnFlags } from './run.js';

/**
 * A new `run`'s intent, told before the command loads its config (see SessionIntent): the
 * state directory is located the way the config load will find it, and when its orchestrator
 * listens the intent goes out on a connection at once, so that the agent starts while this
 * process loads, validates and checks. When none listens, the intent goes with the spawn of the
 * server the command starts (`connectOrchestrator`'s `intent`).
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
   * the connection the intent went on (when the same state directory) and the intent for a
   * server it starts. For another state directory the connection is closed (its agent is
   * discarded) and only the intent goes on.
   */
  connectOptions(stateDir: string): { early?: Promise<OrchestratorClient | undefined>; intent: SessionIntent };
  /** Closes the connection (the command failed before it used it, or runs without an orchestrator): the agent is discarded. */
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
 * server then discards the agent of the first). Without one (no socket then), the socket is looked
 * for again here. Never throws: whatever fails here, the command goes on as without it.
 */
export function tellIntent(
  globals: GlobalOptions,
  env: NodeJS.ProcessEnv,
  cwd: string,
  flags: TurnFlags,
  seed?: EarlySeed,
): EarlyIntent | undefined {
  if (flags.worktree !== undefined || flags.base || flags.branch || flags.includeUncommitted) {
    seed?.discard();
    return undefined;
  }
  // The seed was located from the same config argument, directory and environment: the same answer.
  const located =
    seed && seed.config === globals.config
      ? seed.located
      : locateState({ ...(globals.config ? { path: resolve(globals.config) } : {}), cwd, env });
  if (!located) {
    seed?.discard();
    return undefined;
  }
  const intent = intentOf(flags, env, cwd);
  const path = socketPath(located.stateDir);
  if (seed && seed.located.stateDir !== located.stateDir) seed.discard();
  else if (seed?.listening) {
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
    return earlyIntent(intent, located.stateDir, client, Promise.resolve());
  }
  // Without a socket file nothing listens: the intent goes with the server's spawn instead.
  let sent: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    sent = resolve;
  });
  const listening = existsSync(path);
  const client = listening
    ? tryConnect(path).then(
        (connected) => {
          // Not awaited: the answer (or an older server's refusal) changes nothing here.
          connected?.intent?.(intent).catch(() => undefined);
          sent();
          return connected;
        },
        () => {
          sent();
          return undefined;
        },
      )
    : Promise.resolve(undefined);
  if (!listening) sent();
  return earlyIntent(intent, located.stateDir, client, ready);
}

// The EarlyIntent of `intent` told (or to be told) to the orchestrator of `stateDir` on `client`.
function earlyIntent(
  intent: SessionIntent,
  stateDir: string,
  client: Promise<OrchestratorClient | undefined>,
  ready: Promise<void>,
): EarlyIntent {
  let used = false;
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
      if (used) return;
      used = true;
      await client.then((connected) => connected?.close()).catch(() => undefined);
    },
  };
}
