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

/** What an ask still open when its turn is cancelled is answered with. */
const ABANDONED: EscalationReply = {
  decision: 'deny',
  by: 'policy',
  reason: 'the prompt was abandoned (the turn was cancelled)',
  abandoned: true,
};

/** The server's side: which connection answers the asks of which session (and run). */
export class EscalationRouter {
  readonly #attached = new Map<string, Array<{ runId: string | undefined; connection: Connection }>>();
  readonly #abandoned = new Set<string>();
  // Asks sent to a client and not answered yet, per session: cancel() settles them locally.
  readonly #open = new Map<string, Set<{ runId: string | undefined; abandon: () => void }>>();
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

  /**
   * Declines, as abandoned, the asks of `sessionId` (of run `runId` only, when given) that a
   * client has not answered yet. Called before a cancel interrupts the agent, so the decision
   * is the session's own (declined by policy, abandoned) rather than the agent dropping the ask
   * when the interrupt reaches it first, whichever message the client's answer races with.
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
        if (!connection) return declineEscalator.ask(ask, proposal);
        let abandon!: () => void;
        const abandoned = new Promise<EscalationReply>((resolve) => (abandon = () => resolve({ ...ABANDONED })));
        const entry = { runId, abandon };
        const open = this.#open.get(sessionId) ?? new Set();
        this.#open.set(sessionId, open.add(entry));
        try {
          const asked = connection.requestRaw(
            ESCALATION_REQUEST,
            { sessionId, reason: proposal.reason, ask },
            { timeoutMs: this.#timeoutMs },
          );
          asked.catch(() => undefined);
          const { abandoned: wasAbandoned, ...answer } = EscalationReplySchema.parse(await Promise.race([asked, abandoned]));
          if (wasAbandoned) this.#abandoned.add(ask.requestId);
          return answer;
        } catch {
          return { decision: 'deny', by: 'policy', reason: 'the terminal that runs this turn did not answer (disconnected or timed out)' };
        } finally {
          open.delete(entry);
          if (open.size === 0 && this.#open.get(sessionId) === open) this.#open.delete(sessionId);
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
