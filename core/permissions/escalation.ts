import type { Autonomy, PermissionAsk, PermissionDecision, QuestionAnswer } from '../adapter.js';
import type { AnswerChannel } from '../events/index.js';
import { decidePermission } from './policy.js';
import type { PermissionPolicy, PolicyResult } from './policy.js';
import { rememberKey } from './tool-verdict.js';

/**
 * The escalation port: when the policy cannot decide, a person can (a TTY prompt, an API
 * client, an MCP host). Without a person, `declineEscalator` declines.
 */

/** A person's (or a stand-in's) answer to an escalated ask. */
export interface EscalationAnswer {
  decision: 'allow' | 'deny';
  /** Remember this approval for the rest of the session (honoured only for a person's allow). */
  remember?: boolean;
  /** For questions: the answers, required for an allow. */
  answers?: QuestionAnswer[];
  /** Who decided; defaults to `human`. A stand-in that decides by rule reports `policy`. */
  by?: 'human' | 'policy';
  /** A person's answer: where it came from. */
  channel?: AnswerChannel;
  reason?: string;
}

/** Asks someone to decide an ask the policy escalated. `proposal.reason` says why it escalated. */
export interface Escalator {
  /** `proposal.signal`, when given, aborts this one prompt (the ask was answered elsewhere); the escalator then resolves a deny. */
  ask(ask: PermissionAsk, proposal: { reason: string; signal?: AbortSignal }): Promise<EscalationAnswer>;
}

/** The escalator used without a TTY: declines everything, as a policy decision. */
export const declineEscalator: Escalator = {
  ask: async () => ({ decision: 'deny', by: 'policy', reason: 'no person available to decide (not a TTY)' }),
};

/** A decision plus whether the policy escalated it. */
export type DeciderResult = PermissionDecision & { escalated: boolean };

/** One decision, as reported to `onDecision`. */
export interface DecisionRecord {
  ask: PermissionAsk;
  policy: PolicyResult;
  decision: DeciderResult;
}

export interface PermissionDeciderOptions {
  policy: PermissionPolicy;
  autonomy: Autonomy;
  /** Canonical absolute workspace path. */
  workspace: string;
  escalator: Escalator;
  /**
   * Approvals remembered before this decider (the session record's `sessionAllows`), read at
   * every ask so that approvals recorded by another process count too.
   */
  remembered?: () => Iterable<string>;
  /** Called once per decision, before the promise resolves; must not throw. */
  onDecision?: (record: DecisionRecord) => void;
}

/**
 * Creates the `SessionIO.decide` of one session. Runs the policy engine; when it escalates,
 * asks the escalator. Approvals a person marks "remember" auto-allow the same tools for the rest
 * of this decider's life (deny rules still win), and their keys are returned as `sessionAllows`
 * so that the session records them for later processes. Automatic decisions report `by: 'policy'`,
 * a person's `by: 'human'`. Questions are never answered by guess: an allow without answers,
 * or from anyone but a person, becomes a deny. An escalator that throws yields a deny (fail
 * closed) whose reason carries the error message; the returned promise never rejects because
 * of it.
 */
export function createPermissionDecider(options: PermissionDeciderOptions): (ask: PermissionAsk) => Promise<DeciderResult> {
  const remembered = new Set<string>();
  const { policy, autonomy, workspace, escalator, onDecision } = options;

  return async (ask) => {
    for (const key of options.remembered?.() ?? []) remembered.add(key);
    const result = decidePermission(ask, { policy, autonomy, workspace, remembered });
    const decision: DeciderResult =
      result.verdict === 'escalate'
        ? await escalate(ask, result.reason)
        : {
            decision: result.verdict,
            by: 'policy',
            reason: result.reason,
            escalated: false,
            choice: result.verdict === 'allow' ? 'allow-once' : 'deny',
          };
    onDecision?.({ ask, policy: result, decision });
    return decision;
  };

  // Asks the escalator and turns its answer into a decision, remembering approvals.
  async function escalate(ask: PermissionAsk, reason: string): Promise<DeciderResult> {
    let answer: EscalationAnswer;
    try {
      answer = await escalator.ask(ask, { reason });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { decision: 'deny', by: 'policy', reason: `escalation failed, so denied: ${message}`, escalated: true };
    }
    const by = answer.by ?? 'human';
    const channel = by === 'human' && answer.channel ? { channel: answer.channel } : {};
    if (ask.kind === 'question') return { ...decideQuestion(answer, by), ...channel };
    const sessionAllows: string[] = [];
    if (answer.decision === 'allow' && answer.remember === true && by === 'human') {
      for (const tool of ask.tools) {
        const key = rememberKey(tool);
        if (key !== undefined) sessionAllows.push(key);
      }
    }
    for (const key of sessionAllows) remembered.add(key);
    const verb = answer.decision === 'allow' ? 'approved' : 'denied';
    const remembers = answer.decision === 'allow' && answer.remember === true && by === 'human';
    return {
      decision: answer.decision,
      by,
      reason: answer.reason ?? `${verb} by a person (asked because ${reason})`,
      escalated: true,
      choice: answer.decision === 'deny' ? 'deny' : remembers ? 'allow-session' : 'allow-once',
      ...channel,
      ...(sessionAllows.length > 0 ? { sessionAllows } : {}),
    };
  }
}

// A question is allowed only with a person's answers; anything else declines it.
function decideQuestion(answer: EscalationAnswer, by: 'human' | 'policy'): DeciderResult {
  if (answer.decision === 'deny') {
    return { decision: 'deny', by, reason: answer.reason ?? 'the person declined the question', escalated: true };
  }
  if (by !== 'human') {
    return { decision: 'deny', by: 'policy', reason: 'questions are never answered without a person', escalated: true };
  }
  if (answer.answers === undefined || answer.answers.length === 0) {
    return { decision: 'deny', by: 'human', reason: 'the person gave no answers', escalated: true };
  }
  return { decision: 'allow', by: 'human', reason: answer.reason ?? 'answered by a person', answers: answer.answers, escalated: true };
}
