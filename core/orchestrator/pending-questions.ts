import type { RuntimeEvent } from '../events/index.js';
import { z } from 'zod';
import { lazySchema } from '../lazy-schema.js';
import { askQuestionShape } from '../permissions/index.js';

// Read leniently: logs written before questions were typed lack `options` and `multiSelect`.
const LoggedQuestionSchema = lazySchema(() => z.looseObject(askQuestionShape()).partial({ index: true, options: true, multiSelect: true }));

type Asked = Extract<RuntimeEvent, { type: 'question.asked' }>;
type Requested = Extract<RuntimeEvent, { type: 'permission.requested' }>;

/**
 * What the agent asked during the session's latest turn (the events after the last
 * `turn.started`) that nobody answered, one sentence each, oldest first:
 *
 * - a question (`question.asked`) still waiting, or declined by policy for want of a person
 *   (`question.answered` cancelled, by `policy`): its text, topic and options;
 * - a permission ask (`permission.requested`) still waiting for a decision;
 * - a permission ask denied by policy that the session's `attention` reports as declined
 *   (the escalation found nobody to ask, so a person should decide it).
 *
 * A later turn supersedes them: a follow-up is how a person answers.
 */
export function pendingQuestions(log: readonly RuntimeEvent[], attention: readonly string[] = []): string[] {
  let start = 0;
  for (let i = log.length - 1; i >= 0; i--) {
    if (log[i]!.type === 'turn.started') {
      start = i;
      break;
    }
  }
  const asked = new Map<string, Asked | Requested>();
  const out = new Map<string, string>();
  for (const event of log.slice(start)) {
    if (event.type === 'question.asked' || event.type === 'permission.requested') {
      asked.set(event.requestId, event);
      out.set(
        event.requestId,
        event.type === 'question.asked' ? describeQuestions(event.questions) : `permission for ${labelsOf(event)} (waiting for a decision)`,
      );
    } else if (event.type === 'question.answered') {
      if (!event.cancelled || event.by !== 'policy') out.delete(event.requestId);
    } else if (event.type === 'permission.decided') {
      const ask = asked.get(event.requestId);
      const declined =
        ask?.type === 'permission.requested' &&
        event.decision === 'deny' &&
        event.by === 'policy' &&
        attention.some((a) => a.includes(`permission for ${labelsOf(ask)} was declined`));
      if (declined)
        out.set(event.requestId, `permission for ${labelsOf(ask)} was declined: ${event.reason ?? 'nobody was there to decide'}`);
      else out.delete(event.requestId);
    }
  }
  return [...out.values()];
}

function labelsOf(ask: Requested): string {
  return ask.tools.map((t) => t.label).join(', ');
}

// Questions are typed by the adapter (AskQuestion); an entry of another shape is shown as JSON.
function describeQuestions(questions: readonly unknown[]): string {
  const parts = questions.map((q) => {
    const parsed = LoggedQuestionSchema.safeParse(q);
    if (!parsed.success) return JSON.stringify(q).slice(0, 500);
    const { question, topic, options } = parsed.data;
    const prefix = topic ? `${topic}: ` : '';
    const choices = options && options.length > 0 ? ` (options: ${options.join(' | ')})` : '';
    return `${prefix}${question}${choices}`;
  });
  return parts.length > 0 ? parts.join('; ') : 'the agent asked a question';
}
