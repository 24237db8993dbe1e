import { z } from 'zod';
import { AskChoiceSchema, OpenAskSchema, type OpenAsk } from '../../core/permissions/index.js';
import { SessionIdInput } from './inputs.js';
import { defineTool, type AnyMcpTool } from './tool.js';

/** Tools that list and answer escalated permission asks and questions. */
export const ASK_TOOLS: readonly AnyMcpTool[] = [
  defineTool({
    name: 'list_asks',
    description:
      "Permission asks and agent questions waiting for a person's answer (every session, or one): ask id, session, tool with its command or paths, why the policy escalated it, questions with their options, and when it is declined if nobody answers.",
    input: z.strictObject({ session: SessionIdInput.optional() }),
    output: z.object({ asks: z.array(OpenAskSchema) }),
    readOnly: true,
    async run(orchestrator, { session }) {
      const asks = await orchestrator.listAsks(session);
      return { result: { asks }, text: asks.length === 0 ? 'no open asks' : asks.map(askText).join('\n') };
    },
  }),
  defineTool({
    name: 'answer_ask',
    description:
      "Answers an open ask as the person: allow (once), allow-session (the same call for the rest of the session, kept across processes) or deny. A question is answered with allow and one text per question (a number picks an option). The first answer wins; a later one fails with ask_already_answered, saying who answered. Only answer what the person decided: never approve on the person's behalf.",
    input: z.strictObject({
      ask: z.string().min(1).max(200).describe('ask id from list_asks'),
      choice: AskChoiceSchema,
      text: z.array(z.string().max(10_000)).max(32).optional().describe('answers to the questions, in order, or a note'),
    }),
    output: z.object({
      askId: z.string(),
      sessionId: z.string(),
      decision: z.enum(['allow', 'deny']),
      choice: AskChoiceSchema,
      channel: z.string(),
    }),
    readOnly: false,
    async run(orchestrator, { ask, choice, text }) {
      const answered = await orchestrator.answerAsk({ askId: ask, choice, channel: 'mcp', ...(text ? { text } : {}) });
      return { result: answered, text: `${ask} (session ${answered.sessionId}): ${answered.choice}` };
    },
  }),
];

function askText(ask: OpenAsk): string {
  const what =
    ask.kind === 'question'
      ? (ask.questions ?? []).map((q) => `${q.question}${q.options.length > 0 ? ` (options: ${q.options.join(' | ')})` : ''}`).join('; ')
      : ask.tools.map((t) => t.label).join(', ');
  return `${ask.askId} · session ${ask.sessionId} · ${what} · asked because ${ask.reason}`;
}
