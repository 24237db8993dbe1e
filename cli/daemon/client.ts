import { setMaxListeners } from 'node:events';
import { existsSync, watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createConnection as connectSocket, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RuntimeEvent, TurnOutcome } from '../../core/events/index.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import type { CatalogModel } from '../../core/catalog/index.js';
import type {
  CheckSessionRequest,
  CreateSessionRequest,
  ForkSessionRequest,
  ImportSessionRequest,
  ImportSessionResult,
  IntentStart,
  DiffSessionRequest,
  MergeSessionRequest,
  OrchestratorApi,
  SessionCheck,
  SessionDiff,
  SessionMerge,
  WorktreeApi,
  OrchestratorInfo,
  ReadSessionRequest,
  SendMessageRequest,
  SessionDetail,
  SessionSummary,
  TurnHandle,
  UpdateSessionRequest,
  UsageReport,
  SessionIntent,
  WaitResult,
} from '../../core/orchestrator/index.js';
import { createConnection, type Connection } from '../../core/protocol/index.js';
import type { RunStatus } from '../../core/store/index.js';
import { createStreamTransport } from '../../core/transport/index.js';
import type { PermissionAsk } from '../../core/adapter.js';
import type { AnswerChannel } from '../../core/events/index.js';
import { AnswerChannelSchema } from '../../core/events/index.js';
import {
  type AnsweredAsk,
  type AskAnswer,
  declineEscalator,
  describeChannel,
  type Escalator,
  type OpenAsk,
} from '../../core/permissions/index.js';
import type { CliContext } from '../context.js';
import { assertFileBackend } from '../fleet/backend.js';
import {
  AUTO_START_DEADLINE_MS,
  AUTO_START_FAST_POLL_MS,
  AUTO_START_SLOW_POLL_MS,
  type AutoServer,
  spawnAutoServer,
  startWaitNotices,
} from './auto-start.js';
import type { ReconcileRequest } from '../../core/session/index.js';
import type { CorruptSession } from '../../core/store/index.js';
import {
  ESCALATION_REQUEST,
  ESCALATION_SETTLED,
  EscalationAskParamsSchema,
  EscalationSettledParamsSchema,
  type EscalationReply,
} from './escalations.js';
import { HEARTBEAT_INTERVAL_MS, UNRESPONSIVE_AFTER_MS, serverGoneError, unresponsiveError, type ServerIdentity } from './liveness.js';
import {
  EVENT_NOTIFICATION,
  type ExitReason,
  MAX_WAIT_MS,
  TurnHandleSchema,
  controlEnvelope,
  fromWire,
  logPath,
  socketPath,
} from './wire.js';

/**
 * The orchestrator of a running `one-works serve`, seen through its control socket: the
 * OrchestratorApi, with `subscribe` asynchronous (it is a round trip) and a `close`. One server
 * `wait` is capped at 60 s, so `timedOut` may come earlier than asked.
 */
export interface OrchestratorClient extends Omit<OrchestratorApi, 'subscribe' | 'activity'>, WorktreeApi {
  /** Live events of a session from now on, as `events.event` notifications. */
  subscribe(sessionId: string, listener: (event: RuntimeEvent) => void): Promise<() => Promise<void>>;
  /** Who the server is: its environment fingerprint, whether it was auto-started, its pid and load. */
  hello(): Promise<ServerHello>;
  /**
   * Tells the server what this connection's next createSession will ask for, so that its agent
   * starts now (see SessionIntent); an older server refuses the method (the caller ignores it).
   */
  intent?(intent: SessionIntent): Promise<IntentStart>;
  /** Takes over, on this connection, the intent a `command.run`'s client told (see cli/process-view.ts). */
  adoptIntent?(token: string): Promise<{ adopted: boolean }>;
  /**
   * The answer to the latest `hello` on this connection, undefined before any: a client from
   * {@link connectOrchestrator} has one (the hello that confirmed the connection), so a caller
   * that needs it right after connecting is spared a second round trip.
   */
  readonly greeting: ServerHello | undefined;
  /**
   * Asks an auto-started server to exit if nothing but this client uses it; resolves whether it
   * agreed. `reason` is what its log says: this client runs with another config or environment
   * (`mismatch`, the default), or the client that started it no longer needs it (`unused`).
   */
  exitIfIdle(reason?: ExitReason): Promise<boolean>;
  /** Deletes a session with no live or queued turn (record, event log, session HOME); `session_busy` otherwise. */
  removeSession(sessionId: string): Promise<{ sessionId: string; freedBytes: number }>;
  /** Asks the server to stop as on SIGTERM (turns cancelled, agents stopped); resolves whether it agreed. */
  shutdown(): Promise<boolean>;
  /**
   * Makes this connection the answerer of the session's escalated permission asks during run
   * `runId` (any run when undefined; see escalations.ts) until it closes. `abandoned()` is sent
   * with each answer: true when the person interrupted the turn, so the declined ask needs
   * nobody's attention.
   */
  attachEscalator(sessionId: string, runId: string | undefined, escalator: Escalator, abandoned?: () => boolean): Promise<void>;
  /** The server: its socket, and its pid once `hello` answered (else the owner file's). */
  server(): ServerIdentity;
  close(): Promise<void>;
}

/** Deadlines of a client connection (tests shorten them). */
export interface ClientOptions {
  /** Deadline of requests without one of their own (default the connection's 30 s). */
  defaultTimeoutMs?: number;
  /** Ping interval while a call is pending (default HEARTBEAT_INTERVAL_MS). */
  heartbeatMs?: number;
  /** A ping unanswered this long makes the server unresponsive (default UNRESPONSIVE_AFTER_MS). */
  unresponsiveMs?: number;
}

/** The answer to `hello`. */
export interface ServerHello {
  fingerprint: string | null;
  /** Key and keyed digests of the fingerprint's parts (fingerprint.ts); absent from older servers. */
  digestKey?: string;
  digests?: Record<string, string>;
  auto: boolean;
  pid: number;
  /** When the server started listening (ISO 8601); absent from older servers. */
  startedAt?: string;
  clients: number;
  live: number;
  queued: number;
}

/**
 * Deadlines of control requests that outlast the connection's default (30 s). Accepting a turn
 * (create, send) and listing models may list a cold catalog first, which the orchestrator bounds
 * at 60 s (`catalog_unavailable`). Cancel waits for the grace period and cleanup, which the
 * config may make as long as it likes: it has no deadline of its own, the connection's close
 * (the server gone) ends it.
 */
export const CONTROL_DEADLINES_MS = { accept: 120_000, models: 120_000, cancel: 2 ** 31 - 1, git: 300_000 } as const;

/** How long closing a connection waits for the server to discard its intent's agent (an older server refuses at once). */
const INTENT_DROP_DEADLINE_MS = 10_000;

/** How many servers one call starts at most: one that exits 0 without a server serving is replaced. */
const AUTO_START_SPAWNS = 3;
/** How often it tries the socket meanwhile when the state directory reports no change, in ms (after AUTO_START_FAST_POLL_MS, every AUTO_START_SLOW_POLL_MS). */
const AUTO_START_POLL_MS = 10;

/** Options of {@link connectOrchestrator}. */
export interface ConnectOptions {
  /** Start `one-works serve --auto` when no server answers. */
  autoStart: boolean;
  /** Called when this call started a server (before it serves): a caller that gives up may ask it to exit. */
  onAutoStart?: () => void;
  /**
   * Called once the first attempt is decided: a server accepted the connection (its `hello` is
   * still to come), or one was started, or none runs and none is to be started.
   */
  onAttempted?: () => void;
  /**
   * Aborted when the caller no longer needs the connection: no server is started afterwards (the
   * call then rejects with `request_cancelled`); a server started before is waited for as usual.
   */
  signal?: AbortSignal;
  /** How long to wait for a started server that runs without serving, in ms (default 60 s; tests shorten it). */
  startDeadlineMs?: number;
  /**
   * A connection opened already (a `run` that told its intent on it before its config was
   * loaded), tried first in place of a new one; undefined when none could be opened.
   */
  early?: Promise<OrchestratorClient | undefined> | undefined;
  /** What a `run` is about to create: a server started here gets it with its spawn (`serve --auto --intent`). */
  intent?: SessionIntent | undefined;
  /**
   * A server this command started already, for this state directory and with its intent (a `run`
   * started it before its command loaded: cli/early-intent.ts): waited for as one started by this
   * call, which tries no connection before it and spawns none in its place.
   */
  spawned?: AutoServer | undefined;
}

/**
 * Connects to the state directory's server (`<state>/orchestrator.sock`). Without one and with
 * `autoStart`, starts `one-works serve --auto` in the background (see auto-start.ts) and tries
 * again as soon as the socket appears; concurrent callers end up on the one server that won the
 * owner lock. The started server is waited for while it runs (up to `startDeadlineMs`, 60 s, from its spawn); one
 * that exits non-zero fails the call at once with `orchestrator_unavailable` and what it logged,
 * and one that exits 0 (it left the state directory to another owner) while no server serves is
 * replaced, twice at most. A wait of over 3 s is said on `ctx.out` (stderr), every 5 s. Throws
 * `connection_closed` when no server is running and none is to be
 * started, or the started one still does not serve at the deadline.
 */
export async function connectOrchestrator(
  ctx: Pick<CliContext, 'stateDir' | 'configPath' | 'cwd' | 'env'> & {
    config?: Pick<CliContext['config'], 'state'>;
    /** Where the progress of a slow start is said (stderr in the CLI); nowhere without it. */
    out?: Pick<CliContext['out'], 'info'>;
  },
  options: ConnectOptions,
): Promise<OrchestratorClient> {
  // A fleet (state.backend postgres) has no local orchestrator to reach or start.
  if (ctx.config) assertFileBackend({ config: ctx.config as CliContext['config'] });
  const path = socketPath(ctx.stateDir);
  // Without a socket file nothing serves here (a connect would fail): a server is started at once.
  const early = options.early ? await options.early : undefined;
  // A server started for this command just now serves nobody yet: it is waited for like one started below.
  const socket = early ?? (!options.spawned && existsSync(path) ? await tryConnect(path) : undefined);
  if (socket) options.onAttempted?.();
  const first = await confirmed(socket, options.signal);
  if (first) return first;
  if (!options.autoStart) {
    options.onAttempted?.();
    throw new OneWorksError(
      ERROR_CODES.CONNECTION_CLOSED,
      `no orchestrator is running for ${ctx.stateDir}; start one with \`one-works serve\``,
    );
  }
  // A server started already is waited for all the same: a caller that gave up then asks it to exit.
  if (options.signal?.aborted && !options.spawned) {
    throw new OneWorksError(ERROR_CODES.REQUEST_CANCELLED, `no orchestrator was started for ${ctx.stateDir}: the command gave up first`);
  }
  let given = options.spawned;
  const start = async (): Promise<{ server: AutoServer; exitCode: () => number | null | undefined }> => {
    const server = given ?? spawnAutoServer(ctx, options.intent);
    given = undefined;
    options.onAutoStart?.();
    let exitCode: number | null | undefined;
    void server.exited.then((code) => {
      exitCode = code;
    });
    return { server, exitCode: () => exitCode };
  };
  let started = await start().finally(() => options.onAttempted?.());
  // What the servers started here logged comes after this offset of the log.
  const logOffset = started.server.logOffset;
  let spawns = 1;
  // Counted from the first server's spawn: a `run` that started it waited for it before this call (cli/early-intent.ts).
  const since = started.server.startedAt;
  const deadlineMs = options.startDeadlineMs ?? AUTO_START_DEADLINE_MS;
  // The socket is tried again the moment the state directory changes (the server binding it), and
  // every AUTO_START_POLL_MS anyway: a watch may miss events (some file systems report none), and
  // a failed connect to a missing socket costs one syscall.
  const changes = watchDirectory(ctx.stateDir);
  const notice = startWaitNotices(since, ctx.stateDir, (line) => ctx.out?.info(line));
  try {
    for (;;) {
      await changes.next(Date.now() - since < AUTO_START_FAST_POLL_MS ? AUTO_START_POLL_MS : AUTO_START_SLOW_POLL_MS);
      notice(started.server);
      // Read before the try: a server that lost a start race exits once the winner's socket
      // exists, so after its exit a failed try means that nobody serves.
      const exitCode = started.exitCode();
      const client = await confirmed(await tryConnect(path));
      if (client) return client;
      if (exitCode !== undefined && exitCode !== 0) throw await startFailed(ctx.stateDir, started.server.logOffset, exitCode);
      if (exitCode === 0) {
        // It found the state directory owned (a start race, an exiting server) and left it to that
        // owner, which does not serve (any more): waiting would wait for nobody. Another one starts.
        if (spawns >= AUTO_START_SPAWNS) throw await startFailed(ctx.stateDir, logOffset, 0, spawns);
        if (options.signal?.aborted) {
          throw new OneWorksError(
            ERROR_CODES.REQUEST_CANCELLED,
            `no orchestrator was started for ${ctx.stateDir}: the command gave up first`,
          );
        }
        started = await start();
        spawns += 1;
      } else if (Date.now() - since >= deadlineMs) {
        throw new OneWorksError(
          ERROR_CODES.CONNECTION_CLOSED,
          `the orchestrator (pid ${started.server.pid}) started for ${ctx.stateDir} runs but did not serve within ${deadlineMs / 1000} s; see ${logPath(ctx.stateDir)}`,
          { data: { pid: started.server.pid, log: logPath(ctx.stateDir) } },
        );
      }
    }
  } finally {
    changes.close();
  }
}

// Changes in a directory, as a wait: `next(ms)` resolves at the next change (or one that came
// since the last wait) or after `ms`, whichever comes first. Without a watch (the directory
// cannot be watched), every wait lasts `ms`.
function watchDirectory(dir: string): { next(ms: number): Promise<void>; close(): void } {
  let changed = false;
  let wake: (() => void) | undefined;
  let watcher: FSWatcher | undefined;
  try {
    watcher = watch(dir, { persistent: false }, () => {
      changed = true;
      wake?.();
    });
    watcher.on('error', () => watcher?.close());
  } catch {
    watcher = undefined;
  }
  return {
    next: async (ms) => {
      if (!changed) {
        const ac = new AbortController();
        await Promise.race([
          new Promise<void>((resolve) => {
            wake = resolve;
          }),
          sleep(ms, undefined, { signal: ac.signal }).catch(() => undefined),
        ]);
        wake = undefined;
        ac.abort();
      }
      changed = false;
    },
    close: () => watcher?.close(),
  };
}

// A server that is stopping (an idle exit, a signal) may have had this connection accepted by
// the kernel just before it closed its socket: the connection then closes unanswered and the
// command's first call would fail with connection_closed. A `hello` confirms the connection; one
// closed unanswered counts as no server (the caller starts or finds a new one). Any other failure
// (an unresponsive server) is the one the command's first call would meet: thrown as it is.
// A caller that gives up (`signal`) closes the connection at once, so that a server that does not
// answer (stopped, hung) holds the command no longer than its own checks.
async function confirmed(client: OrchestratorClient | undefined, signal?: AbortSignal): Promise<OrchestratorClient | undefined> {
  if (!client) return undefined;
  const giveUp = (): void => void client.close().catch(() => undefined);
  if (signal?.aborted) giveUp();
  signal?.addEventListener('abort', giveUp, { once: true });
  try {
    await client.hello();
    return client;
  } catch (error) {
    await client.close().catch(() => undefined);
    if (isOneWorksError(error, ERROR_CODES.CONNECTION_CLOSED)) return undefined;
    throw error;
  } finally {
    signal?.removeEventListener('abort', giveUp);
  }
}

// The error of a background server that exited before serving, with what was logged after
// `logOffset` (the `spawns` servers this call started, which all exited 0 when there were several).
async function startFailed(stateDir: string, logOffset: number, exitCode: number | null, spawns = 1): Promise<OneWorksError> {
  const log = logPath(stateDir);
  const text = await readFile(log)
    .then((bytes) => bytes.subarray(logOffset).toString('utf8'))
    .catch(() => '');
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const said = lines.slice(-6).join('\n  ');
  const how = exitCode === null ? 'killed' : `code ${exitCode}`;
  const what =
    exitCode === 0
      ? `${spawns === 1 ? 'the orchestrator started' : `the ${spawns} orchestrators started one after the other`} for ${stateDir} left it to another owner (exit 0), which serves no orchestrator${said ? `:\n  ${said}` : ''}\nStop the process that owns it (see ${stateDir}/owner.json), then run the command again (the servers' output is in ${log}).`
      : `the orchestrator for ${stateDir} exited (${how}) before it served${said ? `:\n  ${said}` : ''}\nFix what it says, then run the command again (its full output is in ${log}).`;
  return new OneWorksError(ERROR_CODES.ORCHESTRATOR_UNAVAILABLE, what, { data: { exitCode, log } });
}

/**
 * Connects to a control socket; `undefined` when nothing listens there. Every call on the
 * client has a deadline, and while one is pending the server is pinged (see liveness.ts): a
 * server that stopped answering ends the calls with `orchestrator_unavailable`, one that closed
 * the connection with `connection_closed`, both naming the server.
 */
export async function tryConnect(path: string, options: ClientOptions = {}): Promise<OrchestratorClient | undefined> {
  const socket = await new Promise<Socket | undefined>((resolve, reject) => {
    const s = connectSocket(path);
    s.once('connect', () => {
      s.removeAllListeners('error');
      resolve(s);
    });
    s.once('error', (error: NodeJS.ErrnoException) => {
      // A full accept backlog: a server is there but does not accept (stopped or hung).
      if (error.code === 'EAGAIN') reject(unresponsiveError({ socketPath: path }, 0));
      else resolve(undefined);
    });
  });
  if (!socket) return undefined;
  return adoptSocket(socket, path, options);
}

/**
 * A client on `socket`, connected to the server at `path` already: `run`'s early connection
 * (cli/early-intent.ts), on which its intent went out before the command loaded. With
 * `intentOpen`, closing the client before a createSession drops that intent, as after
 * {@link OrchestratorClient.intent}. The answer to the early intent's request (whose id is none of
 * this client's) is ignored, as every unexpected response is.
 */
export async function adoptSocket(
  socket: Socket,
  path: string,
  options: ClientOptions & { intentOpen?: boolean } = {},
): Promise<OrchestratorClient> {
  socket.on('error', () => undefined);
  const connection = createConnection(createStreamTransport(socket, socket), controlEnvelope, {
    idPrefix: 'c',
    ...(options.defaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: options.defaultTimeoutMs }),
  });
  connection.onProblem(() => undefined);
  void connection.closed.then(() => socket.destroy());
  await connection.start();
  const client = new SocketClient(connection, socket, path, options);
  if (options.intentOpen) client.markIntentOpen();
  return client;
}

class SocketClient implements OrchestratorClient {
  readonly #connection: Connection;
  readonly #socket: Socket;
  readonly #listeners = new Map<string, Set<(event: RuntimeEvent) => void>>();
  readonly #escalators = new Map<string, { escalator: Escalator; abandoned: () => boolean }>();
  readonly #server: ServerIdentity;
  readonly #heartbeatMs: number;
  readonly #unresponsiveMs: number;
  // Aborted when the server is found unresponsive: every pending call then ends with #dead.
  readonly #gone = new AbortController();
  #dead: OneWorksError | undefined;
  #pending = 0;
  #heartbeat: NodeJS.Timeout | undefined;
  #pinging = false;
  #greeting: ServerHello | undefined;
  // An intent was told on this connection and no createSession followed yet.
  #intentOpen = false;
  // Prompts open on this client by ask id: `escalation.settled` aborts them (answered elsewhere).
  readonly #prompts = new Map<string, AbortController>();

  constructor(connection: Connection, socket: Socket, socketPath: string, options: ClientOptions) {
    this.#connection = connection;
    this.#socket = socket;
    this.#server = { socketPath };
    this.#heartbeatMs = options.heartbeatMs ?? HEARTBEAT_INTERVAL_MS;
    this.#unresponsiveMs = options.unresponsiveMs ?? UNRESPONSIVE_AFTER_MS;
    // Every pending call listens on it and stops listening when it settles: many calls at once (an
    // MCP server, a script) are no leak, and Node's warning about more than 10 would be noise.
    setMaxListeners(0, this.#gone.signal);
    connection.onRequest(ESCALATION_REQUEST, async (params): Promise<EscalationReply> => {
      const { sessionId, reason, ask, askId } = EscalationAskParamsSchema.parse(params);
      const attached = this.#escalators.get(sessionId);
      const settled = new AbortController();
      if (askId !== undefined) this.#prompts.set(askId, settled);
      try {
        const answer = await (attached?.escalator ?? declineEscalator).ask(ask as PermissionAsk, { reason, signal: settled.signal });
        return { ...answer, abandoned: attached?.abandoned() ?? false };
      } finally {
        if (askId !== undefined) this.#prompts.delete(askId);
      }
    });
    connection.onNotification((method, params) => {
      if (method === ESCALATION_SETTLED) {
        const parsed = EscalationSettledParamsSchema.safeParse(params);
        if (parsed.success) this.#prompts.get(parsed.data.askId)?.abort(describeBy(parsed.data.by));
        return;
      }
      if (method !== EVENT_NOTIFICATION) return;
      const { sessionId, event } = params as { sessionId: string; event: RuntimeEvent };
      for (const listener of this.#listeners.get(sessionId) ?? []) listener(event);
    });
  }

  // An intent went out on this connection before this client was made on it (adoptSocket).
  markIntentOpen(): void {
    this.#intentOpen = true;
  }

  /** Takes over, on this connection, the intent a `command.run`'s client told (see cli/process-view.ts). */
  adoptIntent(token: string): Promise<{ adopted: boolean }> {
    this.#intentOpen = true;
    return this.#call('intent.adopt', { token }) as Promise<{ adopted: boolean }>;
  }

  intent(intent: SessionIntent): Promise<IntentStart> {
    this.#intentOpen = true;
    return this.#call('intent', intent) as Promise<IntentStart>;
  }

  async createSession(request: CreateSessionRequest): Promise<TurnHandle> {
    this.#intentOpen = false;
    return TurnHandleSchema.parse(await this.#call('createSession', request, CONTROL_DEADLINES_MS.accept));
  }

  async sendMessage(request: SendMessageRequest): Promise<TurnHandle> {
    return TurnHandleSchema.parse(await this.#call('sendMessage', request, CONTROL_DEADLINES_MS.accept));
  }

  // Results below are the server's own OrchestratorApi values, passed through as sent.
  cancel(sessionId: string, runId?: string): Promise<SessionSummary> {
    return this.#call(
      'cancel',
      runId === undefined ? { sessionId } : { sessionId, runId },
      CONTROL_DEADLINES_MS.cancel,
    ) as Promise<SessionSummary>;
  }

  status(sessionId: string): Promise<SessionSummary> {
    return this.#call('status', { sessionId }) as Promise<SessionSummary>;
  }

  list(): Promise<SessionSummary[]> {
    return this.#call('list', {}) as Promise<SessionSummary[]>;
  }

  updateSession(request: UpdateSessionRequest): Promise<SessionSummary> {
    return this.#call('updateSession', request) as Promise<SessionSummary>;
  }

  listAsks(sessionId?: string): Promise<OpenAsk[]> {
    return this.#call('listAsks', sessionId === undefined ? {} : { sessionId }) as Promise<OpenAsk[]>;
  }

  answerAsk(answer: AskAnswer): Promise<AnsweredAsk> {
    return this.#call('answerAsk', answer) as Promise<AnsweredAsk>;
  }

  resolveAttention(sessionId: string, note?: string): Promise<SessionSummary> {
    return this.#call('resolveAttention', note === undefined ? { sessionId } : { sessionId, note }) as Promise<SessionSummary>;
  }

  readSession(request: ReadSessionRequest): Promise<SessionDetail> {
    return this.#call('readSession', request) as Promise<SessionDetail>;
  }

  usage(sessionIds?: string[]): Promise<UsageReport> {
    return this.#call('usage', sessionIds ? { sessionIds } : {}) as Promise<UsageReport>;
  }

  info(): Promise<OrchestratorInfo> {
    return this.#call('info', {}) as Promise<OrchestratorInfo>;
  }

  models(adapter: string): Promise<CatalogModel[]> {
    return this.#call('models', { adapter }, CONTROL_DEADLINES_MS.models) as Promise<CatalogModel[]>;
  }

  async forkSession(request: ForkSessionRequest): Promise<TurnHandle> {
    return TurnHandleSchema.parse(await this.#call('forkSession', request, CONTROL_DEADLINES_MS.accept));
  }

  importSession(request: ImportSessionRequest): Promise<ImportSessionResult> {
    return this.#call('importSession', request, CONTROL_DEADLINES_MS.accept) as Promise<ImportSessionResult>;
  }

  diffSession(request: DiffSessionRequest): Promise<SessionDiff> {
    return this.#call('diffSession', request, CONTROL_DEADLINES_MS.git) as Promise<SessionDiff>;
  }

  mergeSession(request: MergeSessionRequest): Promise<SessionMerge> {
    return this.#call('mergeSession', request, CONTROL_DEADLINES_MS.git) as Promise<SessionMerge>;
  }

  discardSession(request: { sessionId: string }): Promise<SessionSummary> {
    return this.#call('discardSession', request, CONTROL_DEADLINES_MS.git) as Promise<SessionSummary>;
  }

  // The check's own timeout bounds it; the request waits a little longer for its report.
  checkSession(request: CheckSessionRequest): Promise<SessionCheck> {
    return this.#call('checkSession', request, Math.min(request.timeoutMs + 30_000, 2 ** 31 - 1)) as Promise<SessionCheck>;
  }

  wait(sessionIds: string[], timeoutMs: number): Promise<WaitResult> {
    return this.#call('wait', { sessionIds, timeoutMs }, MAX_WAIT_MS + 30_000) as Promise<WaitResult>;
  }

  waitForRun(sessionId: string, runId: string): Promise<TurnOutcome & { runStatus: RunStatus }> {
    return this.#call('waitForRun', { sessionId, runId }, 2 ** 31 - 1) as Promise<TurnOutcome & { runStatus: RunStatus }>;
  }

  async subscribe(sessionId: string, listener: (event: RuntimeEvent) => void): Promise<() => Promise<void>> {
    let set = this.#listeners.get(sessionId);
    if (!set) {
      set = new Set();
      this.#listeners.set(sessionId, set);
    }
    set.add(listener);
    try {
      await this.#call('events.subscribe', { sessionId });
    } catch (error) {
      set.delete(listener);
      throw error;
    }
    return async () => {
      set.delete(listener);
      if (set.size === 0 && this.#connection.state === 'open') await this.#call('events.unsubscribe', { sessionId });
    };
  }

  async hello(): Promise<ServerHello> {
    const hello = (await this.#call('hello', {})) as ServerHello;
    this.#server.pid = hello.pid;
    this.#greeting = hello;
    return hello;
  }

  get greeting(): ServerHello | undefined {
    return this.#greeting;
  }

  corruptSessions(): Promise<CorruptSession[]> {
    return this.#call('corruptSessions', {}) as Promise<CorruptSession[]>;
  }

  reconcileRun(request: ReconcileRequest): Promise<SessionSummary> {
    return this.#call('reconcileRun', request) as Promise<SessionSummary>;
  }

  server(): ServerIdentity {
    return { ...this.#server };
  }

  async exitIfIdle(reason: ExitReason = 'mismatch'): Promise<boolean> {
    return ((await this.#call('exitIfIdle', { reason })) as { exiting: boolean }).exiting;
  }

  removeSession(sessionId: string): Promise<{ sessionId: string; freedBytes: number }> {
    return this.#call('removeSession', { sessionId }) as Promise<{ sessionId: string; freedBytes: number }>;
  }

  async shutdown(): Promise<boolean> {
    return ((await this.#call('shutdown', {})) as { stopping: boolean }).stopping;
  }

  async attachEscalator(
    sessionId: string,
    runId: string | undefined,
    escalator: Escalator,
    abandoned: () => boolean = () => false,
  ): Promise<void> {
    this.#escalators.set(sessionId, { escalator, abandoned });
    await this.#call('escalations.attach', runId === undefined ? { sessionId } : { sessionId, runId });
  }

  async close(): Promise<void> {
    // An intent no createSession took: its agent is discarded first (answered once it is stopped
    // and its session directory removed), so that a command that gives up leaves nothing behind.
    if (this.#intentOpen && this.#connection.state === 'open') {
      this.#intentOpen = false;
      await this.#call('intent.drop', {}, INTENT_DROP_DEADLINE_MS).catch(() => undefined);
    }
    this.#stopHeartbeat();
    return this.#connection.close();
  }

  async #call(method: string, params: unknown, timeoutMs?: number): Promise<unknown> {
    if (this.#dead) throw this.#dead;
    this.#pending += 1;
    this.#startHeartbeat();
    try {
      return await this.#connection.requestRaw(method, params, {
        signal: this.#gone.signal,
        ...(timeoutMs === undefined ? {} : { timeoutMs }),
      });
    } catch (error) {
      if (this.#dead) throw this.#dead;
      // Transport-level failures name the server, not the method or the request id.
      if (isOneWorksError(error, ERROR_CODES.CONNECTION_CLOSED)) throw serverGoneError(this.#server);
      if (isOneWorksError(error, ERROR_CODES.REQUEST_TIMEOUT)) throw unresponsiveError(this.#server, timeoutMs ?? 0);
      const mapped = fromWire(error);
      throw isOneWorksError(mapped) ? mapped : new OneWorksError(ERROR_CODES.INTERNAL, String(mapped));
    } finally {
      this.#pending -= 1;
      if (this.#pending === 0) this.#stopHeartbeat();
    }
  }

  // Pings while calls are pending; any answer (even an error: an older server) means alive.
  #startHeartbeat(): void {
    if (this.#heartbeat) return;
    this.#heartbeat = setInterval(() => {
      if (this.#pinging || this.#dead || this.#connection.state !== 'open') return;
      this.#pinging = true;
      this.#connection.requestRaw('ping', {}, { timeoutMs: this.#unresponsiveMs }).then(
        () => {
          this.#pinging = false;
        },
        (error: unknown) => {
          this.#pinging = false;
          if (isOneWorksError(error, ERROR_CODES.REQUEST_TIMEOUT)) this.#giveUp();
        },
      );
    }, this.#heartbeatMs);
    this.#heartbeat.unref();
  }

  #stopHeartbeat(): void {
    clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
  }

  // The server did not answer a ping in time: end every pending call and drop the connection
  // (a stopped server never reads it; closing politely could wait on it).
  #giveUp(): void {
    this.#dead = unresponsiveError(this.#server, this.#unresponsiveMs);
    this.#stopHeartbeat();
    this.#gone.abort();
    this.#socket.destroy();
  }
}

// How the terminal names the channel that answered an ask it was showing.
function describeBy(by: string): string {
  return AnswerChannelSchema.safeParse(by).success ? describeChannel(by as AnswerChannel) : 'nobody answered in time';
}
