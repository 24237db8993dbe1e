import { existsSync, readFileSync } from 'node:fs';
import { warmLazySchemas } from '../../core/lazy-schema.js';
import { warmQuickChecks } from '../../core/schema-check.js';
import { rehearseDelegatedRun } from './delegated-run.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { isOneWorksError } from '../../core/errors.js';
import { startOrchestrator } from '../../core/orchestrator/index.js';
import { dropUnclaimedAhead, launchedAheadOutcome, writeLaunchRecipe } from '../../core/session/launch-ahead.js';
import { AskBoard } from '../../core/permissions/index.js';
import { createFileStore, ownerRecordOfThisProcess, type FileStore } from '../../core/store/index.js';
import type { CliContext } from '../context.js';
import { assertFileBackend } from '../state.js';
import { EXIT } from '../exit-codes.js';
import { claimShutdown } from '../shutdown.js';
import { watchConfigFile } from './config-watch.js';
import { serverDeps } from './deps.js';
import { EscalationRouter } from './escalations.js';
import { serverIdentity } from './fingerprint.js';
import { startOrchestratorServer } from './server.js';
import { type ExitReason, IntentParamsSchema, parseParams, socketPath } from './wire.js';
import type { IntentStart, SessionIntent } from '../../core/orchestrator/index.js';

/** How long after its start a server with no client warms up (schemas, checks, a rehearsed delegated `run`). */
const WARM_UP_DELAY_MS = 1000;

export interface ServeOptions {
  /** Started by a client (`serve --auto`): losing the owner lock exits quietly, and the idle exit applies. */
  auto: boolean;
  /** Idle exit in ms; default `orchestrator.idleExitMs` when `auto`, none otherwise. */
  idleExitMs?: number | undefined;
  /**
   * What the `run` that started this server is about to create (JSON of IntentParamsSchema): its
   * agent starts right after the owner lock, before recovery (startOrchestrator); the first
   * createSession of a connection that told no intent of its own takes it if it matches.
   */
  intent?: string | undefined;
}

/**
 * The body of `one-works serve`: owns the state directory (a second server is refused with
 * `state_locked`; an auto-started one that loses the race exits 0 quietly, the client then
 * reaches the winner), starts the orchestrator (which recovers what a dead owner left), listens
 * on `<state>/orchestrator.sock` and runs until SIGTERM/SIGINT or the idle exit. Then it shuts
 * the orchestrator down (turns cancelled, children stopped), closes the socket, releases the
 * owner lock and returns 0.
 */
export async function runServe(ctx: CliContext, options: ServeOptions): Promise<number> {
  const { out } = ctx;
  assertFileBackend(ctx);
  const store = await createFileStore(ctx.stateDir);
  if (!(await claimOwner(ctx, store, options.auto))) {
    out.info('another orchestrator owns this state directory; leaving it to that one');
    // Killed, with its directory, as this process exits (launch-ahead.ts).
    const ahead = launchedAheadOutcome();
    if (ahead !== undefined) out.info(`launch ahead: ${ahead}`);
    return EXIT.ok;
  }
  const shutdown = claimShutdown();
  try {
    // An escalated ask waits askTimeoutMs for an answer from any channel; with 0, only a terminal
    // following the turn is asked, and it has as long as a turn may run.
    const asks = new AskBoard();
    const escalations = new EscalationRouter({
      board: asks,
      askTimeoutMs: ctx.config.orchestrator.askTimeoutMs,
      terminalTimeoutMs: ctx.config.orchestrator.runTimeoutMs,
    });
    // The socket listens while the orchestrator is created (recovery of what a dead owner left,
    // the request keys): a client's hello is answered at once, its requests wait for the orchestrator.
    // The intent's agent starts first, right after the owner lock: every ms before droid's spawn
    // is on the path of the command that started this server.
    const { warmAdapter, ...deps } = serverDeps(ctx, store, out, escalations);
    const start = startOrchestrator({ ...deps, asks }, options.intent === undefined ? undefined : parseIntent(options.intent, out));
    const creating = start.orchestrator;
    creating.catch(() => undefined);
    const idleExitMs = options.idleExitMs ?? (options.auto ? ctx.config.orchestrator.idleExitMs : undefined);
    let onIdle: () => void = () => undefined;
    let onExitRequest: (reason: ExitReason) => void = () => undefined;
    let onShutdownRequest: () => void = () => undefined;
    const idle = new Promise<string>((resolve) => {
      onIdle = () => resolve('idle');
      onExitRequest = (reason) =>
        resolve(
          reason === 'unused'
            ? 'the command that started it failed its own checks and asked the unused server to exit'
            : 'a client with a different config or environment asked an idle server to exit',
        );
    });
    const stopRequested = new Promise<string>((resolve) => {
      onShutdownRequest = () => resolve('`one-works server stop`');
    });
    const startIntent = options.intent === undefined ? undefined : startedIntent(start.intent, out);
    let intentTaken = false;
    // The intent's agent first: the identity's digests and the socket's set-up would otherwise run
    // between its steps. A client polling for the socket finds it once the agent has spawned (or
    // INTENT_HEAD_START_MS on); its createSession could not take the agent before that anyway.
    await start.headStart;
    launchedAhead(ctx, options, start.intent, out);
    const identity = serverIdentity(ctx);
    const server = await startOrchestratorServer({
      orchestrator: creating,
      socketPath: socketPath(ctx.stateDir),
      redact: (text) => out.redact(text),
      idleExitMs,
      onIdle,
      fingerprint: identity.fingerprint,
      digests: { key: identity.key, digests: identity.digests },
      auto: options.auto,
      onExitRequest,
      onShutdownRequest,
      escalations,
      log: (message) => out.info(message),
      takeStartIntent: startIntent
        ? () => {
            if (intentTaken) return Promise.resolve(undefined);
            intentTaken = true;
            return startIntent;
          }
        : undefined,
    }).catch(async (error: unknown) => {
      await creating.then((orchestrator) => orchestrator.shutdown()).catch(() => undefined);
      throw error;
    });
    // What the first session of the default adapter needs (its code, its CLI prepared, its catalog
    // entry read) is done now, in idle time: while the command that started an auto-started
    // server connects and checks, or before the first command reaches a server started by hand.
    setImmediate(() => void warmAdapter(ctx.defaultAdapter));
    // Then, when no client is connected and no turn runs (a detached run leaves no client), what
    // the first turns would build on their way: the code of a `run` a client hands over, and the
    // schemas and quick checks of the modules loaded.
    setTimeout(() => {
      void (async () => {
        // A failed creation is reported below; nothing is warmed for it.
        const created = await creating.catch(() => undefined);
        const { live, queued } = created?.activity() ?? { live: 0, queued: 0 };
        if (!created || server.clients() > 0 || live > 0 || queued > 0) return;
        await rehearseDelegatedRun(ctx.configPath, ctx.approvedRoots[0] ?? ctx.cwd);
        await warmLazySchemas();
        await warmQuickChecks();
      })();
    }, WARM_UP_DELAY_MS).unref();
    const orchestrator = await creating.catch(async (error: unknown) => {
      await server.close();
      throw error;
    });
    out.info(`orchestrator serving ${ctx.stateDir} on ${server.socketPath} (pid ${process.pid})`);
    // Recovery and every query skip a malformed record; the log says which and why, from
    // recovery's own scan (the records are not read a second time).
    for (const bad of (await start.malformed) ?? []) {
      out.info(`session ${bad.sessionId} is left alone: ${bad.file} is malformed (${bad.reason})`);
    }
    // An edited config: the agents started with the old one go at once, none is prewarmed any
    // more, and the next command (whose fingerprint differs) restarts or refuses this server.
    const unwatch = ctx.configPath
      ? watchConfigFile(ctx.configPath, () => {
          out.info(
            `${ctx.configPath} changed: warm and prewarmed agents are closed (config_changed); ` +
              (options.auto
                ? 'the next command restarts this background orchestrator with the new config'
                : 'restart `one-works serve` to apply the new config (commands refuse this server until then)'),
          );
          void orchestrator.drainWarmAgents('config_changed');
        })
      : () => undefined;
    const signalled = new Promise<string>((resolve) => {
      if (shutdown.signal.aborted) resolve('signal');
      shutdown.signal.addEventListener('abort', () => resolve(String(shutdown.signal.reason ?? 'signal')), { once: true });
    });
    const why = await Promise.race([
      idle.then((reason) => ({ idle: true, reason })),
      signalled.then((reason) => ({ idle: false, reason })),
      stopRequested.then((reason) => ({ idle: false, reason })),
    ]);
    unwatch();
    out.info(`orchestrator stopping (${why.reason === 'idle' ? `idle for ${idleExitMs} ms` : why.reason})`);
    if (why.idle) {
      // Nothing to finish: stop listening first, so that a client arriving now reaches no
      // half-stopped orchestrator (its connection closes and it starts or finds a new server).
      await server.close();
      await orchestrator.shutdown();
    } else {
      // Clients still following turns get their (cancelled) outcomes before the socket closes.
      await orchestrator.shutdown();
      await server.close();
    }
    return EXIT.ok;
  } finally {
    shutdown.release();
    await store.releaseOwner();
  }
}

// Once the start intent's agent is spawned (or its head start is over): says what became of an
// agent launched ahead (core/session/launch-ahead.ts), stops one no intent claimed, and keeps the
// recipe of this launch for the next server started the same way (after this one listens).
function launchedAhead(ctx: CliContext, options: ServeOptions, intent: Promise<IntentStart> | undefined, out: CliContext['out']): void {
  const outcome = launchedAheadOutcome();
  if (outcome !== undefined) out.info(`launch ahead: ${outcome}`);
  dropUnclaimedAhead();
  const told = options.intent;
  if (told === undefined || !intent) return;
  void intent.then((started) => {
    if (started?.intentId === undefined) return;
    setImmediate(() => {
      let configText: string | undefined;
      try {
        configText = ctx.configPath ? readFileSync(ctx.configPath, 'utf8') : undefined;
      } catch {
        return;
      }
      writeLaunchRecipe(ctx.stateDir, started.intentId!, { configPath: ctx.configPath, configText, intent: told, env: process.env });
    });
  });
}

// The intent the server was started with, or undefined when it is malformed (the log says why).
function parseIntent(text: string, out: CliContext['out']): SessionIntent | undefined {
  try {
    return parseParams(IntentParamsSchema, JSON.parse(text));
  } catch (error) {
    out.info(`intent: --intent is ignored: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

// The id of the intent's agent (its session id), or undefined when none started (the log says why).
async function startedIntent(start: Promise<IntentStart> | undefined, out: CliContext['out']): Promise<string | undefined> {
  const started = await start;
  if (started?.reason !== undefined) out.info(`intent: no agent started before the first createSession: ${started.reason}`);
  return started?.intentId;
}

/** How long an auto-started server waits for an exiting owner to release the state directory. */
const OWNER_WAIT_MS = 5_000;

// Takes the owner lock. An auto-started server that finds it taken leaves when its owner
// serves (its socket exists) and otherwise waits a little: the owner may be an idle server that
// is exiting (its socket is removed before its lock is released), whose clients need this one.
async function claimOwner(ctx: CliContext, store: FileStore, auto: boolean): Promise<boolean> {
  const deadline = Date.now() + OWNER_WAIT_MS;
  for (;;) {
    try {
      const claim = await store.acquireOwner(ownerRecordOfThisProcess());
      if (claim.recovered) {
        ctx.out.info(
          `recovered the state directory from a stale owner (pid ${claim.previous?.pid ?? '?'} is gone or is another process now)`,
        );
      }
      return true;
    } catch (error) {
      if (!auto || !isOneWorksError(error, 'state_locked')) throw error;
      if (existsSync(socketPath(ctx.stateDir)) || Date.now() >= deadline) return false;
      await sleep(100);
    }
  }
}
