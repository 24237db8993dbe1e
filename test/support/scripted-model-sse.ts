import type { ReplyStep, ScriptedUsage } from './scripted-model-steps.js';

/** How a reply is cut into SSE chunks. Captures used 12 characters of text, 20 of arguments. */
export interface PieceSizes {
  textPieceSize: number;
  argumentPieceSize: number;
}

export const DEFAULT_PIECE_SIZES: PieceSizes = { textPieceSize: 12, argumentPieceSize: 20 };

const DEFAULT_USAGE: ScriptedUsage = { prompt_tokens: 60, completion_tokens: 4 };

/** Splits `text` into pieces of at most `size` characters (at least one piece, possibly empty). */
export function splitPieces(text: string, size: number): string[] {
  if (size < 1) throw new RangeError(`piece size must be >= 1, got ${size}`);
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size) pieces.push(text.slice(start, start + size));
  return pieces;
}

/**
 * The `chat.completion.chunk` objects of one streamed reply, in order, as droid 0.225.2 consumes
 * them: `reasoning_content` deltas, `content` deltas, per tool call a header chunk (index, id,
 * type, name, empty arguments) followed by argument pieces, then one chunk with `finish_reason`
 * and `usage`. The caller writes each as `data: <json>` and ends with `data: [DONE]`.
 */
export function replyChunks(step: ReplyStep, responseNumber: number, model: string, sizes: PieceSizes = DEFAULT_PIECE_SIZES): object[] {
  const id = `c${responseNumber}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: object, finishReason: string | null = null, extra: object = {}): object => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...extra,
  });

  const chunks: object[] = [];
  let first = true;
  // Only the first delta carries `role`, like OpenAI's own stream.
  const delta = (fields: object): object => {
    const out = first ? { role: 'assistant', ...fields } : fields;
    first = false;
    return out;
  };
  if (step.thinking !== undefined) {
    for (const piece of splitPieces(step.thinking, sizes.textPieceSize)) {
      chunks.push(chunk(delta({ reasoning_content: piece })));
    }
  }
  if (step.text !== undefined) {
    for (const piece of splitPieces(step.text, sizes.textPieceSize)) {
      chunks.push(chunk(delta({ content: piece })));
    }
  }
  const toolCalls = step.toolCalls ?? [];
  toolCalls.forEach((call, index) => {
    const header = {
      index,
      id: call.id ?? `call_${responseNumber}_${index}`,
      type: 'function',
      function: { name: call.name, arguments: '' },
    };
    chunks.push(chunk(delta({ tool_calls: [header] })));
    for (const piece of splitPieces(JSON.stringify(call.arguments), sizes.argumentPieceSize)) {
      chunks.push(chunk(delta({ tool_calls: [{ index, function: { arguments: piece } }] })));
    }
  });
  if (chunks.length === 0) chunks.push(chunk(delta({ content: '' })));
  const usage = step.usage ?? DEFAULT_USAGE;
  chunks.push(
    chunk({}, toolCalls.length > 0 ? 'tool_calls' : 'stop', {
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    }),
  );
  return chunks;
}

/** One SSE event line pair for a JSON chunk. */
export function sseData(payload: object | '[DONE]'): string {
  return `data: ${payload === '[DONE]' ? payload : JSON.stringify(payload)}\n\n`;
}
