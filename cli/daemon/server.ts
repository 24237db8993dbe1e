import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { chmod, unlink } from 'node:fs/promises';
import { COMMAND_MATCHED, COMMAND_OUTPUT, COMMAND_RUN, COMMAND_SIGNAL, COMMAND_TURN } from './command-methods.js';
import { createServer, type Server, type Socket } from 'node:net';
import type { Orchestrator } from '../../core/orchestrator/index.js';
import { createConnection, type Connection, ProtocolError } from '../../core/protocol/index.js';
import { createStreamTransport } from '../../core/transport/index.js';
import { EscalationAttachParamsSchema, type EscalationRouter } from './escalations.js';
import {
  AdapterParamsSchema,
  AnswerAskParamsSchema,
  CancelParamsSchema,
  CheckSessionParamsSchema,
  CommandRunParamsSchema,
  CommandSignalParamsSchema,
  CreateSessionParamsSchema,
  DiffSessionParamsSchema,
  MergeSessionParamsSchema,
  EVENT_NOTIFICATION,
  ExitIfIdleParamsSchema,
  type ExitReason,
  ForkSessionParamsSchema,
  ImportSessionParamsSchema,
  IntentAdoptParamsSchema,
  IntentDropParamsSchema,
  IntentParamsSchema,
  MAX_WAIT_MS,
  ListAsksParamsSchema,
  ReadSessionParamsSchema,
  ReconcileParamsSchema,
  ResolveAttentionParamsSchema,
  SendMessageParamsSchema,
  SessionParamsSchema,
  UpdateSessionParamsSchema,
  UsageParamsSchema,
  WaitForRunParamsSchema,
  WaitParamsSchema,
  controlEnvelope,
  parseParams,
  toWire,
} from './wire.js';

export interface OrchestratorServerOptions {
  /**
   * The orchestrator served, or its creation under way: the socket then listens at once, `hello`,
   * `ping` and `shutdown` are answered meanwhile, and every other request waits for it (a
   * creation that fails fails them with its error). Until it exists no turn is live or queued.
   */
  orchestrator: Orchestrator | Promise<Orchestrator>;
  /** Where to listen. The caller owns the state directory, so an existing file here is stale and removed. */
  socketPath: string;
  /** Redacts error messages before they are sent. */
  redact: (text: string) => string;
  /** With a value: `onIdle` is called once nothing is live or queued and no client is connected for this long. */
  idleExitMs?: number | undefined;
  onIdle?: () => void;
  /** Environment fingerprint of this server (see fingerprint.ts), answered to `hello`. */
  fingerprint?: string | undefined;
  /** Keyed digests of the fingerprint's parts (see fingerprint.ts `ServerIdentity`), answered to `hello`. */
  digests?: { key: string; digests: Record<string, string> } | undefined;
  /** Started by a client (`serve --auto`): `exitIfIdle` may stop it. */
  auto?: boolean | undefined;
  /** Called once when a client asked an idle auto-started server to exit (`exitIfIdle`), with its reason. */
  onExitRequest?: (reason: ExitReason) => void;
  /** Called once when a client asked the server to stop (`shutdown`, from `one-works server stop`). */
  onShutdownRequest?: () => void;
  /**
   * The intent this server was started with (`serve --auto --intent`, its agent starting): the
   * first createSession of a connection that told none takes its id (resolving undefined after).
   */
  takeStartIntent?: (() => Promise<string | undefined>) | undefined;
  /** Where `escalations.attach` registers a client as its session's escalator. */
  escalations?: EscalationRouter | undefined;
  /** The server's log (orchestrator.log): says which `run` commands it ran for their clients. */
  log?: ((message: string) => void) | undefined;
}

/** A listening control socket. */
export interface OrchestratorServer {
  readonly socketPath: string;
  /** Connected clients right now. */
  clients(): number;
  /** Stops accepting, closes every client connection and removes the socket file. */
  close(): Promise<void>;
}

/**
 * Serves `orchestrator` on a Unix socket created with mode 0600 (umask while binding, then
 * chmod): one JSON-RPC connection per client, params checked with zod, failures sent as
 * `{ code: -32000, message, data: { code } }` with the OneWorksError's code and a redacted message.
 */
export async function startOrchestratorServer(options: OrchestratorServerOptions): Promise<OrchestratorServer> {
  await removeSocket(options.socketPath);
  const connections = new Set<Connection>();
  const startedAt = new Date().toISOString();
  let reached = false;
  const ready = Promise.resolve(options.orchestrator);
  let created: Orchestrator | undefined;
  // Handled here: a failed creation is the creator's to report; requests waiting on it fail with it.
  ready.then(
    (orchestrator) => {
      created = orchestrator;
    },
    () => undefined,
  );
  const served: Served = { ...options, startedAt, ready, created: () => created, handed: new Map(), sessionsCreated: 0 };
  const server = createServer((socket) => {
    reached = true;
    serveClient(served, socket, connections);
  });
  const previous = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } finally {
    process.umask(previous);
  }
  await chmod(options.socketPath, 0o600);
  const stopIdle =
    options.idleExitMs === undefined
      ? () => undefined
      : watchIdle(
          options,
          () => created,
          () => connections.size,
          () => reached,
        );
  let closing: Promise<void> | undefined;
  return {
    socketPath: options.socketPath,
    clients: () => connections.size,
    close: () => (closing ??= closeServer(server, connections, options.socketPath, stopIdle)),
  };
}

// The server's options with what serving needs: its start time, and the orchestrator once created.
type Served = OrchestratorServerOptions & {
  startedAt: string;
  ready: Promise<Orchestrator>;
  created: () => Orchestrator | undefined;
  /** Intents handed by a `command.run` to the command it runs, by a one-time token (see `intent.adopt`). */
  handed: Map<string, string>;
  /** Sessions created through this server (any connection). */
  sessionsCreated: number;
};

/** How long a command run here for a client may take to close its own connection to this server once it ended. */
const OWN_CONNECTION_CLOSE_MS = 500;

// Nothing is live or queued before the orchestrator exists.
const NO_ACTIVITY = { live: 0, queued: 0 } as const;

function serveClient(served: Served, socket: Socket, connections: Set<Connection>): void {
  const options = served;
  const { ready } = options;
  const connection = createConnection(createStreamTransport(socket, socket), controlEnvelope, { idPrefix: 's' });
  connections.add(connection);
  const subscriptions = new Map<string, () => void>();
  // A request answered without the orchestrator (hello, ping, shutdown).
  const handleNow = (method: string, body: (params: unknown) => Promise<unknown>): void => {
    connection.onRequest(method, async (params) => {
      try {
        return await body(params);
      } catch (error) {
        throw toWire(error, options.redact);
      }
    });
  };
  // A request for the orchestrator: it waits until the orchestrator is created (recovery done).
  const handle = (method: string, body: (params: unknown, orchestrator: Orchestrator) => Promise<unknown>): void =>
    handleNow(method, async (params) => body(params, await ready));
  // The intent told on this connection (its agent starting), until a createSession here takes or discards it.
  let intentId: string | undefined;
  let closed = false;
  // The `intent` being handled, if any: `intent.drop` waits for it.
  let telling: Promise<unknown> = Promise.resolve();
  // `telling` is set as the request arrives (not once the orchestrator is there): a `command.run`
  // right behind it on the connection waits for it too.
  handleNow('intent', (p) => {
    const work = ready.then((orchestrator) => {
      const intent = parseParams(IntentParamsSchema, p);
      const previous = intentId;
      intentId = undefined;
      if (previous !== undefined) void orchestrator.dropIntent(previous, 'its client told another intent');
      return orchestrator.startIntent(intent).then((started) => {
        // The client went away meanwhile: nobody will create its session.
        if (started.intentId !== undefined && closed) void orchestrator.dropIntent(started.intentId, 'its client went away');
        else intentId = started.intentId;
        return started;
      });
    });
    telling = work.catch(() => undefined);
    return work;
  });
  // The command a `command.run` runs takes the intent its client told (on the client's connection)
  // over on its own connection, by the token it was handed: its createSession there takes that agent.
  handle('intent.adopt', async (p, orchestrator) => {
    const { token } = parseParams(IntentAdoptParamsSchema, p);
    const adopted = served.handed.get(token);
    served.handed.delete(token);
    if (adopted === undefined) return { adopted: false };
    await telling;
    const previous = intentId;
    intentId = adopted;
    if (previous !== undefined) void orchestrator.dropIntent(previous, 'its client adopted another intent');
    return { adopted: true };
  });
  // The client gives its intent up (its own checks failed): answered once the agent is stopped and its directory removed.
  handle('intent.drop', async (p, orchestrator) => {
    parseParams(IntentDropParamsSchema, p ?? {});
    await telling;
    const id = intentId;
    intentId = undefined;
    if (id !== undefined) await orchestrator.dropIntent(id, 'its client gave it up');
    return { dropped: id !== undefined };
  });
  handle('createSession', async (p, orchestrator) => {
    const request = parseParams(CreateSessionParamsSchema, p);
    // An intent told just before is settled first: its agent is this request's to take.
    await telling;
    // This connection's intent, else the one the server was started with (for the first createSession only).
    const taken = intentId ?? (await options.takeStartIntent?.());
    intentId = undefined;
    const handle = await orchestrator.createSession(request, { intentId: taken });
    served.sessionsCreated += 1;
    return handle;
  });
  // A plain `run` handed over by a thin client (cli/bin.cjs): run here with the client's process
  // view, its output sent on this connection before the answer (see delegated-run.ts). One at a time.
  let command: AbortController | undefined;
  handleNow(COMMAND_RUN, async (p) => {
    const params = parseParams(CommandRunParamsSchema, p);
    if (command) throw ProtocolError.invalidParams('a command already runs on this connection');
    command = new AbortController();
    // The intent told just before on this connection (its agent starting) goes to the command; a
    // client that told none started this server with its intent (cli/early-intent.ts delegateStartedRun).
    await telling;
    const told = intentId;
    const handedIntent = told ?? (await options.takeStartIntent?.());
    intentId = undefined;
    const token = handedIntent === undefined ? undefined : randomUUID();
    if (token !== undefined) served.handed.set(token, handedIntent!);
    try {
      const { runDelegated } = await import('./delegated-run.js');
      const result = await runDelegated(
        { ...params, ...(token ? { handedIntent: token } : {}) },
        (stream, text) => {
          if (connection.state === 'open') connection.notify(COMMAND_OUTPUT, { stream, text }).catch(() => undefined);
        },
        command.signal,
        () => {
          if (connection.state === 'open') connection.notify(COMMAND_MATCHED, {}).catch(() => undefined);
        },
        () => closed,
        (turn) => {
          if (connection.state === 'open') connection.notify(COMMAND_TURN, { ...turn, pid: process.pid }).catch(() => undefined);
        },
      );
      options.log?.(
        'exitCode' in result
          ? `command: ran a client's \`run\` here (exit ${result.exitCode})`
          : `command: declined a client's \`run\`, which runs it itself (${result.declined})`,
      );
      return result;
    } finally {
      command = undefined;
      // Not adopted (the command declined or failed first): its agent goes before the answer, so
      // that nothing of it is left when the client, running the command itself, reports and exits.
      if (token !== undefined && served.handed.delete(token))
        await served
          .created()
          ?.dropIntent(handedIntent!, 'its command did not use it')
          .catch(() => undefined);
      // The command of the client that started this server (it handed its run over with no intent
      // of its own) ended without a session, refused by its own checks: the server goes, as that
      // command run by its client asks it to (cli/early-intent.ts retireServer).
      // Its own connection to this server closes as it ends: waited for a moment, so that only
      // another client's keeps the server.
      const orchestrator = served.created();
      if (told === undefined && options.takeStartIntent !== undefined && served.sessionsCreated === 0 && orchestrator) {
        for (let waited = 0; connections.size > 1 && waited < OWN_CONNECTION_CLOSE_MS; waited += 5) await sleep(5);
        await exitIfIdle(orchestrator, 'unused');
      }
    }
  });
  handleNow(COMMAND_SIGNAL, (p) => {
    const { signal } = parseParams(CommandSignalParamsSchema, p);
    command?.abort(signal);
    return Promise.resolve({ signalled: command !== undefined });
  });
  handle('sendMessage', (p, orchestrator) => orchestrator.sendMessage(parseParams(SendMessageParamsSchema, p)));
  handle('cancel', (p, orchestrator) => {
    const { sessionId, runId } = parseParams(CancelParamsSchema, p);
    // An open terminal prompt of the cancelled turn is declined here first, not raced by the interrupt.
    options.escalations?.abandon(sessionId, runId);
    return orchestrator.cancel(sessionId, runId);
  });
  handle('status', (p, orchestrator) => orchestrator.status(parseParams(SessionParamsSchema, p).sessionId));
  handle('list', (_p, orchestrator) => orchestrator.list());
  handle('corruptSessions', (_p, orchestrator) => orchestrator.corruptSessions());
  handle('reconcileRun', (p, orchestrator) => orchestrator.reconcileRun(parseParams(ReconcileParamsSchema, p)));
  // Liveness for clients waiting on a long call (cli/daemon/liveness.ts).
  handleNow('ping', () => Promise.resolve({ pid: process.pid }));
  handle('activity', (_p, orchestrator) => Promise.resolve(orchestrator.activity()));
  handle('updateSession', (p, orchestrator) => orchestrator.updateSession(parseParams(UpdateSessionParamsSchema, p)));
  handle('removeSession', (p, orchestrator) => orchestrator.removeSession(parseParams(SessionParamsSchema, p).sessionId));
  handle('listAsks', (p, orchestrator) => orchestrator.listAsks(parseParams(ListAsksParamsSchema, p ?? {}).sessionId));
  handle('answerAsk', (p, orchestrator) => orchestrator.answerAsk(parseParams(AnswerAskParamsSchema, p)));
  handle('resolveAttention', (p, orchestrator) => {
    const { sessionId, note } = parseParams(ResolveAttentionParamsSchema, p);
    return orchestrator.resolveAttention(sessionId, note);
  });
  handle('readSession', (p, orchestrator) => orchestrator.readSession(parseParams(ReadSessionParamsSchema, p)));
  handle('usage', (p, orchestrator) => orchestrator.usage(parseParams(UsageParamsSchema, p ?? {}).sessionIds));
  handle('info', (_p, orchestrator) => orchestrator.info());
  handle('models', (p, orchestrator) => orchestrator.models(parseParams(AdapterParamsSchema, p).adapter));
  handle('forkSession', (p, orchestrator) => orchestrator.forkSession(parseParams(ForkSessionParamsSchema, p)));
  handle('importSession', (p, orchestrator) => orchestrator.importSession(parseParams(ImportSessionParamsSchema, p)));
  handle('diffSession', (p, orchestrator) => orchestrator.diffSession(parseParams(DiffSessionParamsSchema, p)));
  handle('mergeSession', (p, orchestrator) => orchestrator.mergeSession(parseParams(MergeSessionParamsSchema, p)));
  handle('discardSession', (p, orchestrator) => orchestrator.discardSession(parseParams(SessionParamsSchema, p)));
  handle('checkSession', (p, orchestrator) => orchestrator.checkSession(parseParams(CheckSessionParamsSchema, p)));
  handle('wait', (p, orchestrator) => {
    const { sessionIds, timeoutMs } = parseParams(WaitParamsSchema, p);
    return orchestrator.wait(sessionIds, Math.min(timeoutMs, MAX_WAIT_MS));
  });
  handle('waitForRun', (p, orchestrator) => {
    const { sessionId, runId } = parseParams(WaitForRunParamsSchema, p);
    return orchestrator.waitForRun(sessionId, runId);
  });
  handle('events.subscribe', async (p, orchestrator) => {
    const { sessionId } = parseParams(SessionParamsSchema, p);
    await orchestrator.status(sessionId);
    if (!subscriptions.has(sessionId)) {
      subscriptions.set(
        sessionId,
        orchestrator.subscribe(sessionId, (event) => {
          if (connection.state === 'open') connection.notify(EVENT_NOTIFICATION, { sessionId, event }).catch(() => undefined);
        }),
      );
    }
    return { subscribed: sessionId };
  });
  handleNow('hello', () =>
    Promise.resolve({
      fingerprint: options.fingerprint ?? null,
      ...(options.digests ? { digestKey: options.digests.key, digests: options.digests.digests } : {}),
      auto: options.auto === true,
      pid: process.pid,
      startedAt: options.startedAt,
      clients: connections.size,
      ...(options.created()?.activity() ?? NO_ACTIVITY),
    }),
  );
  // `server stop`: any server agrees; it stops like on SIGTERM (live and queued turns cancelled).
  handleNow('shutdown', () => {
    if (options.onShutdownRequest === undefined) return Promise.resolve({ stopping: false });
    setImmediate(() => options.onShutdownRequest?.());
    return Promise.resolve({ stopping: true });
  });
  // Only an auto-started server with nothing to do but this client's connection agrees to exit.
  handle('exitIfIdle', async (p, orchestrator) => {
    // An older client sends no reason: it asked because its config or environment differs.
    const reason = parseParams(ExitIfIdleParamsSchema, p ?? {}).reason ?? 'mismatch';
    return exitIfIdle(orchestrator, reason);
  });
  const exitIfIdle = async (orchestrator: Orchestrator, reason: ExitReason): Promise<{ exiting: boolean }> => {
    const { live, queued } = orchestrator.activity();
    const exiting = options.auto === true && options.onExitRequest !== undefined && live === 0 && queued === 0 && connections.size <= 1;
    if (!exiting) return { exiting };
    // The warm agents (started with this config) and the agents started for intents go before the
    // answer, recorded as config_changed: a command that asked (its own checks failed, or it runs with
    // another config) exits with nothing of its own left running or on disk. The exit follows the
    // answer (setImmediate): exiting closes this connection.
    // The intent this server was started with may still be starting its agent: settled, then dropped.
    const startIntent = await options.takeStartIntent?.();
    if (startIntent !== undefined) await orchestrator.dropIntent(startIntent, 'the server was asked to exit before a session took it');
    await orchestrator.drainWarmAgents('config_changed').catch(() => undefined);
    setImmediate(() => options.onExitRequest?.(reason));
    return { exiting };
  };
  handle('escalations.attach', async (p, orchestrator) => {
    const { sessionId, runId } = parseParams(EscalationAttachParamsSchema, p);
    await orchestrator.status(sessionId);
    // Detached when this connection closes (see EscalationRouter.attach).
    return { attached: options.escalations?.attach(sessionId, runId, connection) !== undefined };
  });
  handleNow('events.unsubscribe', (p) => {
    const { sessionId } = parseParams(SessionParamsSchema, p);
    subscriptions.get(sessionId)?.();
    subscriptions.delete(sessionId);
    return Promise.resolve({ unsubscribed: sessionId });
  });
  // A misbehaving client only loses its own connection.
  connection.onProblem(() => undefined);
  socket.on('error', () => undefined);
  void connection.closed.then(() => {
    closed = true;
    if (intentId !== undefined) void options.created()?.dropIntent(intentId, 'its client went away');
    intentId = undefined;
    for (const unsubscribe of subscriptions.values()) unsubscribe();
    subscriptions.clear();
    connections.delete(connection);
    socket.destroy();
  });
  connection.start().catch(() => socket.destroy());
}

/**
 * A server that no client has reached yet stays at least this long: the client that started
 * it polls for its socket while it starts (a short idleExitMs would otherwise let it exit
 * between two polls).
 */
const FIRST_CLIENT_GRACE_MS = 10_000;

// Polls every min(idleExitMs, 250) ms; idle time restarts whenever a client or a turn exists, and
// does not start before the orchestrator is created (its recovery is work, not idleness).
function watchIdle(
  options: OrchestratorServerOptions,
  created: () => Orchestrator | undefined,
  clients: () => number,
  reached: () => boolean,
): () => void {
  const idleMs = options.idleExitMs!;
  let busyAt = Date.now();
  const timer = setInterval(
    () => {
      const orchestrator = created();
      const { live, queued } = orchestrator?.activity() ?? NO_ACTIVITY;
      if (!orchestrator || clients() > 0 || live > 0 || queued > 0) busyAt = Date.now();
      else if (Date.now() - busyAt >= (reached() ? idleMs : Math.max(idleMs, FIRST_CLIENT_GRACE_MS))) {
        clearInterval(timer);
        options.onIdle?.();
      }
    },
    Math.max(10, Math.min(idleMs, 250)),
  );
  return () => clearInterval(timer);
}

async function closeServer(server: Server, connections: Set<Connection>, path: string, stopIdle: () => void): Promise<void> {
  stopIdle();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await Promise.all([...connections].map((connection) => connection.close()));
  await closed;
  await removeSocket(path);
}

// Removes a socket file, when there is one. unlink, not rm({ force }): Node's rm goes through its
// rimraf, whose first use compiles that module, on the server's way to serving.
async function removeSocket(path: string): Promise<void> {
  await unlink(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'ENOENT') throw error;
  });
}
