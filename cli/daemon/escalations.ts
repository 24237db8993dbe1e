import { z } from 'zod';
import type { PermissionAsk } from '../../core/adapter.js';
import { declineEscalator, type EscalationAnswer, type Escalator } from '../../core/permissions/index.js';
import type { Connection } from '../../core/protocol/index.js';

/**
 * Permission asks that a policy escalates, routed from the server to the client that runs the
 * session's turn (`one-works run`/`send` on a terminal). The client attaches with
 * `escalations.attach { sessionId }`; the server then sends it `escalation.ask` requests
 * (server → client JSON-RPC requests on the same connection) and uses the answers. Without an
 * attached client, or when it disconnects, fails or does not answer in time, the ask is
 * declined as a server without a terminal declines it (the session then needs attention).
 */

/** The server → client request that asks the attached client's person. */
export const ESCALATION_REQUEST = 'escalation.ask';

const ToolSchema = z.looseObject({
  toolUseId: z.string(),
  name: z.string(),
  kind: z.string(),
  label: z.string(),
  command: z.string().optional(),
  paths: z.array(z.string()).optional(),
  impact: z.enum(['low', 'medium', 'high']).optional(),
  input: z.unknown(),
});

/** Params of {@link ESCALATION_REQUEST}, as the client checks them. */
export const EscalationAskParamsSchema = z.strictObject({
  sessionId: z.string().min(1),
  reason: z.string(),
  ask: z.looseObject({
    requestId: z.string(),
    kind: z.enum(['tool', 'question']),
    tools: z.array(ToolSchema),
    options: z.array(z.string()),
    questions: z.array(z.unknown()).optional(),
  }),
});

/** Params of `escalations.attach`: the session, and the run whose asks this client answers (all runs without it). */
export const EscalationAttachParamsSchema = z.strictObject({ sessionId: z.string().min(1).max(200), runId: z.string().min(1).optional() });

/** The client's answer. `abandoned`: the person interrupted the turn, so nobody needs to attend to it. */
export const EscalationReplySchema = z.strictObject({
  decision: z.enum(['allow', 'deny']),
  remember: z.boolean().optional(),
  answers: z.array(z.unknown()).optional(),
  by: z.enum(['human', 'policy']).optional(),
  reason: z.string().optional(),
  abandoned: z.boolean().optional(),
});
export type EscalationReply = z.infer<typeof EscalationReplySchema>;

/** The server's side: which connection answers the asks of which session (and run). */
export class EscalationRouter {
  readonly #attached = new Map<string, Array<{ runId: string | undefined; connection: Connection }>>();
  readonly #abandoned = new Set<string>();
  readonly #timeoutMs: number;

  /** `timeoutMs`: how long an attached client may take to answer before the ask is declined. */
  constructor(options: { timeoutMs: number }) {
    this.#timeoutMs = options.timeoutMs;
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
   * True when the client that answered this request said its person abandoned it (the turn was
   * interrupted). Asked once per request: the mark is forgotten here.
   */
  takeAbandoned(requestId: string): boolean {
    return this.#abandoned.delete(requestId);
  }

  /** The escalator of one session's runner; `liveRun()` names the run being decided. Never rejects (failures decline). */
  escalatorFor(sessionId: string, liveRun: () => string | undefined = () => undefined): Escalator {
    return {
      ask: async (ask: PermissionAsk, proposal: { reason: string }): Promise<EscalationAnswer> => {
        const connection = this.#answerer(sessionId, liveRun());
        if (!connection) return declineEscalator.ask(ask, proposal);
        try {
          const raw = await connection.requestRaw(ESCALATION_REQUEST, { sessionId, reason: proposal.reason, ask }, { timeoutMs: this.#timeoutMs });
          const { abandoned, ...answer } = EscalationReplySchema.parse(raw);
          if (abandoned) this.#abandoned.add(ask.requestId);
          return answer;
        } catch {
          return { decision: 'deny', by: 'policy', reason: 'the terminal that runs this turn did not answer (disconnected or timed out)' };
        }
      },
    };
  }

  // The client following this run, else the latest one attached for every run of the session.
  #answerer(sessionId: string, runId: string | undefined): Connection | undefined {
    const open = (this.#attached.get(sessionId) ?? []).filter((e) => e.connection.state === 'open');
    return (open.find((e) => runId !== undefined && e.runId === runId) ?? open.filter((e) => e.runId === undefined).at(-1))?.connection;
  }
}
