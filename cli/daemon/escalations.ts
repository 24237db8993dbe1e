import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import type { PermissionAsk } from '../../core/adapter.js';
import { AnswerChannelSchema } from '../../core/events/index.js';
import {
  type AskBoard,
  askQuestionShape,
  askToolShape,
  declineEscalator,
  type EscalationAnswer,
  type Escalator,
} from '../../core/permissions/index.js';
import type { Connection } from '../../core/protocol/index.js';
import { paramsSchema } from './wire.js';

/**
 * Permission asks and questions that a policy escalates. Each one opens on the orchestrator's
 * AskBoard, where any channel may answer it (`one-works answer`, MCP `answer_ask`, an MCP
 * elicitation), and is also sent to the client that runs the session's turn when one is
 * attached (`one-works run`/`send` on a terminal: `escalations.attach { sessionId }`, then
 * `escalation.ask` server → client requests on the same connection). The first answer wins;
 * the terminal of an ask answered elsewhere gets `escalation.settled` and drops its prompt.
 * Nobody answering within `askTimeoutMs` declines it by policy (the session then needs
 * attention); with `askTimeoutMs` 0 and no terminal, it is declined at once (no person).
 */

/** The server → client request that asks the attached client's person. */
export const ESCALATION_REQUEST = 'escalation.ask';

const ToolSchema = lazySchema(() => z.looseObject({ toolUseId: z.string(), ...askToolShape(), input: z.unknown() }));

/** Params of {@link ESCALATION_REQUEST}, as the client checks them. */
export const EscalationAskParamsSchema = paramsSchema(() => ({
  sessionId: z.string().min(1),
  reason: z.string(),
  ask: z.looseObject({
    requestId: z.string(),
    kind: z.enum(['tool', 'question']),
    tools: z.array(ToolSchema),
    options: z.array(z.string()),
    questions: z.array(z.looseObject(askQuestionShape())).optional(),
  }),
  /** The ask's id on the board (`escalation.settled` names it). */
  askId: z.string().optional(),
}));

/** Server → client notification: an ask sent to this client was answered elsewhere (or timed out). */
export const ESCALATION_SETTLED = 'escalation.settled';
export const EscalationSettledParamsSchema = lazySchema(() => z.looseObject({ askId: z.string(), by: z.string() }));

/** Params of `escalations.attach`: the session, and the run whose asks this client answers (all runs without it). */
export const EscalationAttachParamsSchema = paramsSchema(() => ({
  sessionId: z.string().min(1).max(200),
  runId: z.string().min(1).optional(),
}));

/** The client's answer. `abandoned`: the person interrupted the turn, so nobody needs to attend to it. */
export const EscalationReplySchema = lazySchema(() =>
  z.strictObject({
    decision: z.enum(['allow', 'deny']),
    remember: z.boolean().optional(),
    answers: z.array(z.strictObject({ index: z.number().int(), question: z.string(), answer: z.string() })).optional(),
    by: z.enum(['human', 'policy']).optional(),
    channel: AnswerChannelSchema.optional(),
    reason: z.string().optional(),
    abandoned: z.boolean().optional(),
  }),
);
export type EscalationReply = z.infer<typeof EscalationReplySchema>;

/** What an ask still open when its turn is cancelled is answered with. */
const ABANDONED: EscalationReply = {
  decision: 'deny',
  by: 'policy',
  reason: 'the prompt was abandoned (the turn was cancelled)',
  abandoned: true,
};

/** The server's side: which connection answers the asks of which session (and run), and the board. */
export class EscalationRouter {
  readonly #attached = new Map<string, Array<{ runId: string | undefined; connection: Connection }>>();
  readonly #abandoned = new Set<string>();
  // Asks not settled yet, per session: cancel() settles them locally.
  readonly #open = new Map<string, Set<{ runId: string | undefined; abandon: () => void }>>();
  readonly #board: AskBoard;
  readonly #askTimeoutMs: number;
  readonly #terminalTimeoutMs: number;

  /**
   * `askTimeoutMs`: how long an ask stays open for an answer (0: declined at once without an
   * attached terminal). `terminalTimeoutMs`: the limit instead when it is 0 and a terminal follows.
   */
  constructor(options: { board: AskBoard; askTimeoutMs: number; terminalTimeoutMs: number }) {
    this.#board = options.board;
    this.#askTimeoutMs = options.askTimeoutMs;
    this.#terminalTimeoutMs = options.terminalTimeoutMs;
  }

  /**
   * Makes `connection` the answerer of `sessionId`'s asks during run `runId` (or during any
   * run without a match, when `runId` is undefined; the latest such attachment wins) until the
   * returned function is called or the connection closes.
   */
  attach(sessionId: string, runId: string | undefined, connection: Connection): () => void {
    const entry = { runId, connection };
    this.#attached.set(sessionId, [...(this.#attached.get(sessionId) ?? []), entry]);
    const detach = (): void => {
      const left = (this.#attached.get(sessionId) ?? []).filter((e) => e !== entry);
      if (left.length > 0) this.#attached.set(sessionId, left);
      else this.#attached.delete(sessionId);
    };
    void connection.closed.then(detach);
    return detach;
  }

  /**
   * True when the ask was abandoned (the client's person interrupted the turn, or a cancel
   * settled it). Asked once per request: the mark is forgotten here.
   */
  takeAbandoned(requestId: string): boolean {
    return this.#abandoned.delete(requestId);
  }

  /**
   * Declines, as abandoned, the asks of `sessionId` (of run `runId` only, when given) that
   * nobody answered yet. Called before a cancel interrupts the agent, so the decision is the
   * session's own (declined by policy, abandoned) rather than the agent dropping the ask when
   * the interrupt reaches it first, whichever message an answer races with.
   */
  abandon(sessionId: string, runId?: string): void {
    for (const ask of this.#open.get(sessionId) ?? [])
      if (runId === undefined || ask.runId === undefined || ask.runId === runId) ask.abandon();
  }

  /** The escalator of one session's runner; `liveRun()` names the run being decided. Never rejects (failures decline). */
  escalatorFor(sessionId: string, liveRun: () => string | undefined = () => undefined): Escalator {
    return {
      ask: async (ask: PermissionAsk, proposal: { reason: string }): Promise<EscalationAnswer> => {
        const runId = liveRun();
        const connection = this.#answerer(sessionId, runId);
        if (!connection && this.#askTimeoutMs === 0) return declineEscalator.ask(ask, proposal);
        const timeoutMs = this.#askTimeoutMs === 0 ? this.#terminalTimeoutMs : this.#askTimeoutMs;
        const { askId, answer, settle } = this.#board.open({
          sessionId,
          runId,
          ask,
          reason: proposal.reason,
          expiresAt: new Date(Date.now() + timeoutMs),
        });
        const expire = (): boolean =>
          settle(this.#askTimeoutMs === 0 ? TERMINAL_SILENT : timedOut(timeoutMs, sessionId), 'nobody (it timed out)');
        const timer = setTimeout(expire, timeoutMs);
        const entry = {
          runId,
          abandon: () => {
            if (settle({ decision: 'deny', by: 'policy', reason: ABANDONED.reason! }, 'nobody (the turn was cancelled)'))
              this.#abandoned.add(ask.requestId);
          },
        };
        const open = this.#open.get(sessionId) ?? new Set();
        this.#open.set(sessionId, open.add(entry));
        // With askTimeoutMs 0 the terminal is the only channel: its failure declines at once.
        if (connection)
          this.#askTerminal(
            connection,
            { sessionId, askId, ask, reason: proposal.reason, timeoutMs },
            settle,
            () => this.#askTimeoutMs === 0 && expire(),
          );
        try {
          const result = await answer;
          // The terminal's prompt of an ask settled otherwise is dropped there.
          if (connection && result.channel !== 'terminal' && connection.state === 'open')
            connection.notify(ESCALATION_SETTLED, { askId, by: result.channel ?? 'policy' }).catch(() => undefined);
          return result;
        } finally {
          clearTimeout(timer);
          open.delete(entry);
          if (open.size === 0 && this.#open.get(sessionId) === open) this.#open.delete(sessionId);
        }
      },
    };
  }

  // Sends the ask to the terminal following the turn; its reply settles the ask unless another channel did first.
  #askTerminal(
    connection: Connection,
    {
      sessionId,
      askId,
      ask,
      reason,
      timeoutMs,
    }: { sessionId: string; askId: string; ask: PermissionAsk; reason: string; timeoutMs: number },
    settle: (answer: EscalationAnswer, by: string) => boolean,
    failed: () => void,
  ): void {
    connection
      .requestRaw(ESCALATION_REQUEST, { sessionId, reason, ask, askId }, { timeoutMs })
      .then((reply) => {
        const { abandoned, ...answer } = EscalationReplySchema.parse(reply);
        if (answer.reason === ANSWERED_ELSEWHERE) return;
        const by = answer.by === 'policy' ? 'nobody (the terminal declined it)' : 'a person at the terminal following the turn';
        if (settle({ ...answer, channel: 'terminal' }, by) && abandoned) this.#abandoned.add(ask.requestId);
      })
      // A terminal that disconnected or failed leaves the ask to the other channels and the timeout.
      .catch(failed);
  }

  // The client following this run, else the latest one attached for every run of the session.
  #answerer(sessionId: string, runId: string | undefined): Connection | undefined {
    const open = (this.#attached.get(sessionId) ?? []).filter((e) => e.connection.state === 'open');
    return (open.find((e) => runId !== undefined && e.runId === runId) ?? open.filter((e) => e.runId === undefined).at(-1))?.connection;
  }
}

/** The reason a terminal reports for a prompt dropped because another channel answered. */
export const ANSWERED_ELSEWHERE = 'answered through another channel';

const TERMINAL_SILENT: EscalationAnswer = {
  decision: 'deny',
  by: 'policy',
  reason: 'the terminal that runs this turn did not answer (disconnected or timed out)',
};

// Nobody answered in time: declined by policy, saying how to answer next time.
function timedOut(timeoutMs: number, sessionId: string): EscalationAnswer {
  const seconds = Math.round(timeoutMs / 100) / 10;
  return {
    decision: 'deny',
    by: 'policy',
    reason: `nobody answered within ${seconds} s (orchestrator.askTimeoutMs); next time answer while it waits: \`one-works asks ${sessionId}\` then \`one-works answer ASK allow|allow-session|deny\`, MCP answer_ask, or a terminal following the turn (raise orchestrator.askTimeoutMs to wait longer)`,
  };
}
