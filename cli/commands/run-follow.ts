import { join } from 'node:path';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import type { RuntimeEvent, TurnOutcome } from '../../core/events/index.js';
import type { CreateSessionRequest, ForkSessionRequest, SendMessageRequest, TurnHandle } from '../../core/orchestrator/index.js';
import type { Store } from '../../core/store/index.js';
import type { CliContext } from '../context.js';
import type { OrchestratorClient } from '../daemon/client.js';
import { EXIT } from '../exit-codes.js';
import { lostTurnLines } from '../lost-turn.js';
import { currentView } from '../process-view.js';
import { commandTerminal, isInteractive } from '../permissions.js';
import { createLiveRenderer } from '../render.js';
import { claimShutdown } from '../shutdown.js';
import { createTtyEscalator } from '../tty-escalator.js';
import { TurnFeed } from '../turn-feed.js';

/** The turn `run` (a new session) or `send` (one more turn) submits. */
export type TurnTarget =
  | { kind: 'new'; request: CreateSessionRequest }
  | { kind: 'fork'; request: ForkSessionRequest }
  | { kind: 'resume'; request: SendMessageRequest };

/**
 * Submits one turn to the orchestrator and follows it like an in-process run: its live view
 * (assembled by TurnFeed from live events and the log), permission prompts on this terminal
 * (this client attaches as the session's escalator when stdin and stderr are TTYs), and the
 * result lines. Returns the exit code: 0 completed, 130 interrupted by a signal, 1 otherwise.
 *
 * The first SIGINT/SIGTERM declines an open prompt and cancels the turn through the
 * orchestrator (protocol interrupt, then a kill after the grace); this waits for the recorded
 * outcome. A second signal exits at once; the orchestrator still finishes the cancel. If this
 * process dies, the turn goes on in the orchestrator. The session's live events stay subscribed
 * until the caller closes `client`, which it does next (nothing is shown after the outcome).
 */
export async function followTurn(
  ctx: CliContext,
  client: OrchestratorClient,
  store: Pick<Store, 'readEvents'>,
  target: TurnTarget,
  banner: string,
  options: {
    hint?: boolean;
    /**
     * Says the warnings about this session's policy (stderr) and returns whether there were any
     * (the live view then leaves out the turn's copies). Called once the turn's request went out,
     * before its answer is awaited: said before the session line (or the refusal), without
     * holding the request back.
     */
    sayLimitations?: () => boolean;
    /** Where the session's record and events are (default: its folder in the state directory). */
    location?: (sessionId: string) => { record: string; events: string };
    /** `resume`: the session's live events, subscribed already (see {@link subscribeEarly}). */
    subscription?: EarlySubscription;
  } = {},
): Promise<number> {
  const { out } = ctx;
  const prompts = new AbortController();
  const terminal = commandTerminal();
  const escalator = isInteractive(out, terminal)
    ? createTtyEscalator({ ...terminal, redact: (text) => out.redact(text), signal: prompts.signal })
    : undefined;
  let sessionId = target.kind === 'resume' ? target.request.sessionId : undefined;
  let limitationsSaid = false;
  const feed = new TurnFeed({
    // A getter: the warnings are said once the request went out, before any event is rendered.
    render: createLiveRenderer(out, {
      get limitationsSaid() {
        return limitationsSaid;
      },
    }),
    readLog: () => store.readEvents(sessionId!),
  });
  // Never unsubscribed: the caller closes the client next, which ends the subscription on both
  // sides without a round trip more before the command exits.
  const subscribe = async (id: string): Promise<void> => {
    await client.subscribe(id, (event) => feed.push(event));
  };
  // The request is on its way (its write runs in this turn of the event loop's microtasks) before
  // the warnings are worked out and said; its answer is taken after them.
  const submit = async (request: Promise<TurnHandle>): Promise<TurnHandle> => {
    request.catch(() => undefined);
    if (options.sayLimitations) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      limitationsSaid = options.sayLimitations();
    }
    return request;
  };
  // Asks of this run only: another client may be following the session's other turns. An ask
  // cannot come before the turn's agent started, which takes far longer than this round trip.
  const attach = async (handle: TurnHandle): Promise<void> => {
    if (escalator) await client.attachEscalator(handle.sessionId, handle.runId, escalator, () => prompts.signal.aborted);
  };

  const shutdown = claimShutdown();
  let interrupted = false;
  let cancelling: Promise<unknown> | undefined;
  let accepted: TurnHandle | undefined;
  // Only once the turn was accepted: before that, there is nothing of ours to cancel. Only this
  // run: other clients' turns of the same session go on.
  const cancel = (): void => {
    if (accepted !== undefined && interrupted) cancelling ??= client.cancel(accepted.sessionId, accepted.runId).catch(() => undefined);
  };
  const onShutdown = (): void => {
    interrupted = true;
    prompts.abort();
    out.info('interrupting the turn (a second Ctrl-C stops everything at once)');
    cancel();
  };
  shutdown.signal.addEventListener('abort', onShutdown, { once: true });
  try {
    let handle: TurnHandle;
    if (target.kind === 'resume') {
      // Listening before submitting: the turn's first event (`turn.queued`) arrives live.
      if (options.subscription) {
        options.subscription.take((event) => feed.push(event));
        await options.subscription.ready;
      } else {
        await subscribe(target.request.sessionId);
      }
      handle = await submit(client.sendMessage(target.request));
      feed.start(handle.runId, undefined, { queued: handle.state === 'queued' });
    } else {
      // The session exists only now; what it sent before the subscription comes from the log.
      handle = await submit(target.kind === 'fork' ? client.forkSession(target.request) : client.createSession(target.request));
      sessionId = handle.sessionId;
      await subscribe(handle.sessionId);
      feed.start(handle.runId, 1);
    }
    await attach(handle);
    accepted = handle;
    // A command run for a thin client tells it the turn (cli/daemon/delegated-run.ts), which it
    // names itself if this orchestrator goes away.
    currentView()?.turnAccepted?.({ sessionId: handle.sessionId, runId: handle.runId });
    out.info(`session ${handle.sessionId} · ${banner}${handle.state === 'queued' ? ' · queued: waiting for a free slot' : ''}`);
    cancel();
    const { runStatus: _runStatus, ...outcome }: TurnOutcome & { runStatus: unknown } = await client
      .waitForRun(handle.sessionId, handle.runId)
      .catch((error: unknown) => {
        throw lostWhileRunning(error, client, handle);
      });
    await feed.finish();
    await cancelling;
    const dir = `${ctx.stateDir}/sessions/${handle.sessionId}`;
    const { record, events } = options.location?.(handle.sessionId) ?? { record: `${dir}/session.json`, events: `${dir}/events.jsonl` };
    out.result({ type: 'result', sessionId: handle.sessionId, outcome, record, events }, () =>
      [
        `session ${handle.sessionId}: ${outcome.status}`,
        `  record: ${record}`,
        `  events: ${events}`,
        ...(options.hint === false ? [] : [`  continue: ${continueHint(ctx, handle.sessionId)}`]),
      ].join('\n'),
    );
    if (outcome.status === 'completed') return EXIT.ok;
    return interrupted ? EXIT.interrupted : EXIT.turnNotCompleted;
  } finally {
    shutdown.signal.removeEventListener('abort', onShutdown);
    prompts.abort();
    shutdown.release();
  }
}

/** A session's live events, subscribed before the turn is submitted: see {@link subscribeEarly}. */
export interface EarlySubscription {
  /** Settles once the server subscribed the connection (rejects as `subscribe` does). */
  readonly ready: Promise<void>;
  /** Hands the events over: those received so far at once, in order, then each as it comes. */
  take(listener: (event: RuntimeEvent) => void): void;
}

/**
 * Subscribes to the session's live events as soon as `client` connects, so that `send` is
 * listening by the time its own checks passed and submits without a round trip more; the events
 * wait for {@link EarlySubscription.take}. Ends with the client's connection. A failure is kept
 * in `ready` (marked handled: a command that fails its checks first never awaits it).
 */
export function subscribeEarly(client: Promise<OrchestratorClient>, sessionId: string): EarlySubscription {
  const held: RuntimeEvent[] = [];
  let deliver: ((event: RuntimeEvent) => void) | undefined;
  const ready = client.then(async (connected) => {
    await connected.subscribe(sessionId, (event) => (deliver ? deliver(event) : held.push(event)));
  });
  ready.catch(() => undefined);
  return {
    ready,
    take: (listener) => {
      for (const event of held.splice(0)) listener(event);
      deliver = listener;
    },
  };
}

/**
 * The command that continues the session from this directory: with `--config` when the config
 * file is not the one found by default here (`./one-works.yaml`), so the hint works as printed.
 */
export function continueHint(ctx: Pick<CliContext, 'configPath' | 'cwd'>, sessionId: string): string {
  const found = ctx.configPath === undefined || ctx.configPath === join(ctx.cwd, 'one-works.yaml');
  return `one-works ${found ? '' : `--config ${shellQuote(ctx.configPath!)} `}send ${sessionId} "…"`;
}

function shellQuote(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The orchestrator went away (crashed, killed) or stopped answering while it ran this turn:
 * what happened and what to do, in place of the connection's error. Other errors pass unchanged.
 */
function lostWhileRunning(error: unknown, client: OrchestratorClient, handle: TurnHandle): unknown {
  if (!isOneWorksError(error)) return error;
  const gone = error.code === ERROR_CODES.CONNECTION_CLOSED;
  if (!gone && error.code !== ERROR_CODES.ORCHESTRATOR_UNAVAILABLE) return error;
  const { sessionId, runId } = handle;
  const { pid } = client.server();
  const lines = gone
    ? lostTurnLines({ sessionId, runId, pid })
    : [
        `${error.message}\nTurn ${runId} of session ${sessionId} may still be running in it.`,
        `Follow it with \`one-works events ${sessionId} --follow\` once it answers again.`,
      ];
  return new OneWorksError(error.code, lines.join('\n'), {
    data: { sessionId, runId, ...(pid === undefined ? {} : { pid }) },
    cause: error,
  });
}
