import { randomBytes } from '../lazy-crypto.js';
import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import type { AskQuestion, PermissionAsk, QuestionAnswer } from '../adapter.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { AnswerChannelSchema, type AnswerChannel } from '../events/index.js';
import type { EscalationAnswer } from './escalation.js';

/**
 * The open asks of one orchestrator: every escalated permission ask or question waits here
 * until someone answers it (the terminal that follows the turn, `one-works answer`, MCP
 * `answer_ask`, an MCP elicitation) or it settles otherwise (timeout, cancel). The first
 * answer wins; a later one is refused with `ask_already_answered`, naming who answered.
 */

/** A person's choice: allow once, allow for the rest of the session, or deny. */
export const AskChoiceSchema = lazySchema(() => z.enum(['allow', 'allow-session', 'deny']));
export type AskChoice = z.infer<typeof AskChoiceSchema>;

/** A typed question ({@link AskQuestion}) as events and channels carry it. */
export const askQuestionShape = () => ({
  index: z.number().int(),
  topic: z.string().optional(),
  question: z.string(),
  options: z.array(z.string()),
  multiSelect: z.boolean(),
});
export const AskQuestionSchema = lazySchema(() => z.strictObject(askQuestionShape()));

/**
 * The fields of one tool call of a permission ask ({@link PermissionAsk} `tools`) that channels
 * show a person: every list of asks (strict) and the terminal's `escalation.ask` (which adds the
 * call's id and input) build on them.
 */
export const askToolShape = () => ({
  name: z.string(),
  kind: z.string(),
  label: z.string(),
  command: z.string().optional(),
  paths: z.array(z.string()).optional(),
  impact: z.enum(['low', 'medium', 'high']).optional(),
});

/** An open ask as every channel lists it (`one-works asks`, MCP `list_asks`). */
export const OpenAskSchema = lazySchema(() =>
  z.strictObject({
    askId: z.string().describe('Pass to answer / answer_ask.'),
    sessionId: z.string(),
    runId: z.string().optional(),
    /** The agent's own request id (the `requestId` of the `permission.requested` / `question.asked` event). */
    requestId: z.string(),
    kind: z.enum(['tool', 'question']).describe('tool: a permission ask; question: the agent asks the person something.'),
    tools: z.array(z.strictObject(askToolShape())),
    questions: z.array(AskQuestionSchema).optional(),
    reason: z.string().describe('Why the policy escalated it.'),
    openedAt: z.string(),
    expiresAt: z.string().optional().describe('When it is declined if nobody answers.'),
  }),
);
export type OpenAsk = z.infer<typeof OpenAskSchema>;

/** One answer, from any channel. `text`: free-text answers to questions (one per question), or a note on a permission. */
export const AskAnswerSchema = lazySchema(() =>
  z.strictObject({
    askId: z.string().min(1).max(200),
    choice: AskChoiceSchema,
    text: z.array(z.string().max(10_000)).max(32).optional(),
    channel: AnswerChannelSchema,
  }),
);
export type AskAnswer = z.infer<typeof AskAnswerSchema>;

/** What answering returned: the ask and the decision recorded for it. */
export interface AnsweredAsk {
  askId: string;
  sessionId: string;
  decision: 'allow' | 'deny';
  choice: AskChoice;
  channel: AnswerChannel;
}

/** A settled ask remembered for the "already answered by …" message. */
interface Settled {
  by: string;
  at: string;
}

interface Entry {
  view: OpenAsk;
  ask: PermissionAsk;
  resolve: (answer: EscalationAnswer, by: string) => boolean;
}

/** How many settled asks are remembered for the "already answered" message. */
const SETTLED_KEPT = 1000;

export class AskBoard {
  readonly #open = new Map<string, Entry>();
  readonly #settled = new Map<string, Settled>();
  readonly #listeners = new Set<(ask: OpenAsk) => void>();

  /**
   * Opens an ask. `answer` settles with the first of: a channel's {@link answer}, or `settle`
   * (timeout, cancel, a terminal's reply). `settle` returns false when the ask was already
   * settled. `expiresAt` is only shown; the caller owns the timer.
   */
  open(input: { sessionId: string; runId?: string | undefined; ask: PermissionAsk; reason: string; expiresAt?: Date | undefined }): {
    askId: string;
    answer: Promise<EscalationAnswer>;
    settle: (answer: EscalationAnswer, by: string) => boolean;
  } {
    const askId = `ask-${randomBytes(5).toString('hex')}`;
    const { ask } = input;
    let settleAnswer!: (answer: EscalationAnswer) => void;
    const answer = new Promise<EscalationAnswer>((resolve) => (settleAnswer = resolve));
    const view: OpenAsk = {
      askId,
      sessionId: input.sessionId,
      ...(input.runId ? { runId: input.runId } : {}),
      requestId: ask.requestId,
      kind: ask.kind,
      tools: ask.tools.map((t) => ({
        name: t.name,
        kind: t.kind,
        label: t.label,
        ...(t.command !== undefined ? { command: t.command } : {}),
        ...(t.paths ? { paths: t.paths } : {}),
        ...(t.impact ? { impact: t.impact } : {}),
      })),
      ...(ask.questions ? { questions: ask.questions.map((q) => ({ ...q })) } : {}),
      reason: input.reason,
      openedAt: new Date().toISOString(),
      ...(input.expiresAt ? { expiresAt: input.expiresAt.toISOString() } : {}),
    };
    const resolve = (result: EscalationAnswer, by: string): boolean => {
      if (!this.#open.has(askId)) return false;
      this.#open.delete(askId);
      this.#settled.set(askId, { by, at: new Date().toISOString() });
      if (this.#settled.size > SETTLED_KEPT) this.#settled.delete(this.#settled.keys().next().value!);
      settleAnswer(result);
      return true;
    };
    this.#open.set(askId, { view, ask, resolve });
    for (const listener of this.#listeners) listener(view);
    return { askId, answer, settle: resolve };
  }

  /** Open asks, oldest first; only `sessionId`'s when given. */
  list(sessionId?: string): OpenAsk[] {
    return [...this.#open.values()].map((e) => e.view).filter((v) => sessionId === undefined || v.sessionId === sessionId);
  }

  /** Calls `listener` with every ask opened from now on; returns the unsubscribe function. */
  onOpen(listener: (ask: OpenAsk) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Answers an open ask as a person (`by: human`, with the channel). Throws `ask_already_answered`
   * (naming who answered and when) when it was settled already, `ask_not_found` for an unknown
   * id, `usage` for an answer that does not fit (an allow of a question without text).
   */
  answer(answer: AskAnswer): AnsweredAsk {
    const entry = this.#open.get(answer.askId);
    if (!entry) {
      const settled = this.#settled.get(answer.askId);
      if (settled) {
        throw new OneWorksError(
          ERROR_CODES.ASK_ALREADY_ANSWERED,
          `ask ${answer.askId} was already answered by ${settled.by} at ${settled.at}`,
          {
            data: { askId: answer.askId, by: settled.by, at: settled.at },
          },
        );
      }
      throw new OneWorksError(ERROR_CODES.ASK_NOT_FOUND, `no open ask ${answer.askId}; list the open ones with \`one-works asks\``, {
        data: { askId: answer.askId },
      });
    }
    const result = toEscalationAnswer(entry.ask, answer);
    entry.resolve(result, describeChannel(answer.channel));
    return {
      askId: answer.askId,
      sessionId: entry.view.sessionId,
      decision: result.decision,
      choice: answer.choice,
      channel: answer.channel,
    };
  }
}

/** How an answer's channel is named in "already answered by …". */
export function describeChannel(channel: AnswerChannel): string {
  switch (channel) {
    case 'terminal':
      return 'a person at the terminal following the turn';
    case 'cli':
      return 'a person with `one-works answer`';
    case 'mcp':
      return 'an MCP client (answer_ask)';
    case 'elicitation':
      return 'a person through MCP elicitation';
  }
}

// A channel's answer as the permission decider takes it.
function toEscalationAnswer(ask: PermissionAsk, answer: AskAnswer): EscalationAnswer {
  const note = answer.text?.join(' ').trim();
  const by = describeChannel(answer.channel);
  if (answer.choice === 'deny') {
    return { decision: 'deny', by: 'human', channel: answer.channel, reason: `denied by ${by}${note ? `: ${note}` : ''}` };
  }
  if (ask.kind === 'question') {
    const questions = ask.questions ?? [];
    const texts = answer.text ?? [];
    if (questions.length === 0 || texts.length !== questions.length || texts.some((t) => t.trim() === '')) {
      throw new OneWorksError(
        ERROR_CODES.USAGE,
        `answer the agent's ${questions.length === 1 ? 'question' : `${questions.length} questions`} with one text each (--text, in order; a number picks an option), or deny`,
      );
    }
    const answers: QuestionAnswer[] = questions.map((q, i) => ({
      index: q.index,
      question: q.question,
      answer: answerText(q, texts[i]!.trim()),
    }));
    return { decision: 'allow', by: 'human', channel: answer.channel, answers, reason: `answered by ${by}` };
  }
  const session = answer.choice === 'allow-session';
  return {
    decision: 'allow',
    remember: session,
    by: 'human',
    channel: answer.channel,
    reason: `${session ? 'allowed for this session' : 'allowed once'} by ${by}${note ? `: ${note}` : ''}`,
  };
}

/**
 * A person's reply to a question as the agent gets it: numbers pick options (several,
 * comma-separated, for multi-select; joined with ", "); anything else is free text.
 */
export function answerText(question: AskQuestion, text: string): string {
  const parts = question.multiSelect
    ? text
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '')
    : [text];
  const picked = parts.map((part) => (/^\d+$/.test(part) ? question.options[Number(part) - 1] : undefined));
  if (parts.length === 0 || picked.some((option) => option === undefined)) return text;
  return [...new Set(picked)].join(', ');
}
