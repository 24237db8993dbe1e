import type { IncomingHttpHeaders } from 'node:http';

/** One tool call the scripted model makes; `arguments` is serialised to JSON and streamed in pieces. */
export interface ScriptedToolCall {
  name: string;
  arguments: Record<string, unknown>;
  /**
   * Defaults to `call_<n>_<index>` (the shape the captures show), `n` counting the streamed
   * conversation replies (side requests excluded) from 1.
   */
  id?: string;
}

/** Token counts reported in the final chunk (OpenAI names). */
export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/**
 * A streamed 200 reply: optional `reasoning_content` (thinking), then text, then tool calls, all
 * in one response. With tool calls the finish reason is `tool_calls`, otherwise `stop`.
 * `delayMs` waits before the response headers are sent.
 */
export interface ReplyStep {
  thinking?: string;
  text?: string;
  toolCalls?: ScriptedToolCall[];
  usage?: ScriptedUsage;
  delayMs?: number;
}

/** An HTTP error status with a JSON body (default `{error:{message:"scripted error <status>"}}`). */
export interface HttpErrorStep {
  httpError: number;
  body?: unknown;
  /** Seconds, sent as the `retry-after` header. */
  retryAfter?: number;
  delayMs?: number;
}

/**
 * Sends the SSE headers (and `text`, when given), then nothing for `hangMs`, then drops the connection without
 * `[DONE]`. A client disconnect or `close()` ends the hang early.
 */
export interface HangStep {
  hangMs: number;
  /** Streamed as content deltas (no finish) before the hang: the reply is cut off mid-way. */
  text?: string;
}

/** A step computed from the request it answers (e.g. to echo a tool result back). */
export type DynamicStep = (request: RecordedRequest) => StaticStep;

export type StaticStep = ReplyStep | HttpErrorStep | HangStep;
export type Step = StaticStep | DynamicStep;

/**
 * How the server classified a request:
 * `step` consumed a script step; `side` is a title/summary request answered with the title reply;
 * `exhausted` came after the script ran out; `models` is `GET /v1/models`; `other` got a 404
 * (or, in strict mode, a 400 for a malformed body).
 */
export type RequestKind = 'step' | 'side' | 'exhausted' | 'models' | 'other';

/** One request as the scripted model saw it. `body` is the parsed JSON body, or undefined. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  kind: RequestKind;
  /** Index into the script for `kind: 'step'`. */
  stepIndex?: number;
}

/** A chat message as droid sends it (only the fields the helpers read). */
interface ChatMessage {
  role?: unknown;
  content?: unknown;
  tool_call_id?: unknown;
}

// Reads `messages` out of an unknown request body without trusting its shape.
export function chatMessages(request: RecordedRequest): ChatMessage[] {
  const body = request.body as { messages?: unknown } | undefined;
  return Array.isArray(body?.messages) ? (body.messages as ChatMessage[]) : [];
}

/** Flattens an OpenAI message `content` (string or array of text parts) into one string. */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => {
      const text = (part as { text?: unknown } | null)?.text;
      return typeof text === 'string' ? text : '';
    })
    .join('');
}

/** The `role: "tool"` messages of a request, in order: what droid reports back after running tools. */
export function toolResults(request: RecordedRequest): { toolCallId: string; content: string }[] {
  return chatMessages(request)
    .filter((message) => message.role === 'tool')
    .map((message) => ({
      toolCallId: typeof message.tool_call_id === 'string' ? message.tool_call_id : '',
      content: contentText(message.content),
    }));
}

/** The text of the last `role: "user"` message of a request ('' if none). */
export function lastUserText(request: RecordedRequest): string {
  const users = chatMessages(request).filter((message) => message.role === 'user');
  return contentText(users.at(-1)?.content);
}
