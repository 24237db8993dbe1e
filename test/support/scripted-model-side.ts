import { contentText } from './scripted-model-steps.js';

// droid 0.225.2's title prompt says "generates concise session titles"; its compaction prompt
// asks for a summary of the conversation. Both are sent without `tools`.
const SIDE_PROMPT = /session titles?\b|produce a summary/i;

/**
 * True for droid's side requests on the conversation model — session-title generation and
 * compaction summaries — which a script must answer without consuming a step. Recognised by a
 * missing or empty `tools` list (droid always sends its tools with conversation calls) or by the
 * system prompt.
 */
export function isSideRequest(body: unknown): boolean {
  const request = body as { tools?: unknown; messages?: unknown } | null;
  const tools = request?.tools;
  if (!Array.isArray(tools) || tools.length === 0) return true;
  const messages = Array.isArray(request?.messages) ? (request.messages as { role?: unknown; content?: unknown }[]) : [];
  const system = messages.find((message) => message.role === 'system');
  return system !== undefined && SIDE_PROMPT.test(contentText(system.content).slice(0, 400));
}
