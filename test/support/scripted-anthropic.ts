import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { listenLoopback } from './loopback-server.js';

/**
 * A scripted Anthropic Messages API server on 127.0.0.1, for driving the real Claude Code CLI
 * offline (ANTHROPIC_BASE_URL). It answers `POST /v1/messages` with streamed SSE the way the
 * Messages API does (message_start, content_block_start/delta/stop, message_delta, message_stop),
 * tool_use blocks with their input streamed as `input_json_delta` pieces, and records every
 * request so tests can assert what the model saw. Modelled on scripted-model.ts (the OpenAI one).
 */

/** One tool_use block; `input` is serialised and streamed in `pieceSize` pieces. */
export interface AnthropicToolCall {
  name: string;
  input: Record<string, unknown>;
  /** Default `toolu_<n>_<k>`: n counts conversation replies from 1, k the block. */
  id?: string;
}

/** A 200 reply: text, then tool_use blocks. With tool calls stop_reason is `tool_use`, else `end_turn`. */
export interface AnthropicReplyStep {
  text?: string;
  toolCalls?: AnthropicToolCall[];
  usage?: { input_tokens: number; output_tokens: number };
  /** Waits before the response headers. */
  delayMs?: number;
}

export interface AnthropicErrorStep {
  httpError: number;
  body?: unknown;
}

/** Sends the SSE headers, then nothing for `hangMs`, then drops the connection. */
export interface AnthropicHangStep {
  hangMs: number;
}

export type AnthropicStaticStep = AnthropicReplyStep | AnthropicErrorStep | AnthropicHangStep;
export type AnthropicStep = AnthropicStaticStep | ((request: AnthropicRequest) => AnthropicStaticStep);

/** `step` consumed a script step; `side` had no tools (a title or summary request); `exhausted`; `count` (count_tokens); `other` (404). */
export type AnthropicRequestKind = 'step' | 'side' | 'exhausted' | 'count' | 'other';

export interface AnthropicRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  kind: AnthropicRequestKind;
  stepIndex?: number;
}

export interface ScriptedAnthropicOptions {
  steps: AnthropicStep[];
  /** Reply to side requests; default "Scripted title". */
  sideReply?: string;
  /** Size of the text and input_json pieces; default 7. */
  pieceSize?: number;
  /** The model reported in message_start; default "scripted". */
  model?: string;
}

/** A running server. The caller must `close()` it. */
export interface ScriptedAnthropic {
  /** `http://127.0.0.1:<port>`: ANTHROPIC_BASE_URL (the CLI appends /v1/messages). */
  baseUrl: string;
  port: number;
  requests: AnthropicRequest[];
  pending(): number;
  close(): Promise<void>;
}

export const ANTHROPIC_EXHAUSTED_TEXT = '(script exhausted)';

export async function startScriptedAnthropic(options: ScriptedAnthropicOptions): Promise<ScriptedAnthropic> {
  const steps = [...options.steps];
  const pieceSize = options.pieceSize ?? 7;
  const model = options.model ?? 'scripted';
  const requests: AnthropicRequest[] = [];
  const abort = new AbortController();
  let next = 0;
  let replies = 0;

  const serve = async (step: AnthropicStaticStep, res: ServerResponse, side: boolean, streamed: boolean): Promise<void> => {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const signal = AbortSignal.any([abort.signal, gone.signal]);
    if ('delayMs' in step && step.delayMs !== undefined) await sleep(step.delayMs, undefined, { signal });
    if ('hangMs' in step) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      await sleep(step.hangMs, undefined, { signal });
      res.destroy();
      return;
    }
    if ('httpError' in step) {
      const body = step.body ?? { type: 'error', error: { type: 'api_error', message: `scripted error ${step.httpError}` } };
      res.writeHead(step.httpError, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    if (!side) replies += 1;
    if (!streamed) {
      // A request without `stream: true` (2.1.333 checks a `set_model` model that way) gets one JSON message.
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jsonMessage(step, side ? 0 : replies, model)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [event, data] of messageEvents(step, side ? 0 : replies, model, pieceSize)) {
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    }
    res.end();
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const path = (req.url ?? '').split('?')[0];
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    const record = (kind: AnthropicRequestKind, stepIndex?: number): void => {
      const entry: AnthropicRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, kind };
      if (stepIndex !== undefined) entry.stepIndex = stepIndex;
      requests.push(entry);
    };
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      record('count');
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"input_tokens":10}');
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/messages' || typeof body !== 'object' || body === null) {
      record('other');
      res
        .writeHead(404, { 'content-type': 'application/json' })
        .end('{"type":"error","error":{"type":"not_found_error","message":"not found"}}');
      return;
    }
    const streamed = (body as { stream?: unknown }).stream === true;
    const tools = (body as { tools?: unknown }).tools;
    if (!Array.isArray(tools) || tools.length === 0) {
      record('side');
      await serve({ text: options.sideReply ?? 'Scripted title' }, res, true, streamed);
      return;
    }
    if (next >= steps.length) {
      record('exhausted');
      await serve({ text: ANTHROPIC_EXHAUSTED_TEXT }, res, false, streamed);
      return;
    }
    const stepIndex = next;
    next += 1;
    record('step', stepIndex);
    const step = steps[stepIndex] as AnthropicStep;
    await serve(typeof step === 'function' ? step(requests.at(-1) as AnthropicRequest) : step, res, false, streamed);
  };

  const listening = await listenLoopback(handle);
  const { port } = listening;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    requests,
    pending: () => steps.length - next,
    close: async () => {
      abort.abort();
      await listening.close();
    },
  };
}

// The SSE events of one streamed Messages reply, in the API's order.
function messageEvents(step: AnthropicReplyStep, n: number, model: string, pieceSize: number): Array<[string, unknown]> {
  const usage = step.usage ?? { input_tokens: 50, output_tokens: 5 };
  const events: Array<[string, unknown]> = [];
  const id = `msg_scripted_${n}`;
  events.push([
    'message_start',
    {
      type: 'message_start',
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input_tokens, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    },
  ]);
  let index = 0;
  if (step.text !== undefined) {
    events.push(['content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }]);
    for (const piece of pieces(step.text, pieceSize)) {
      events.push(['content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } }]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    index += 1;
  }
  const calls = step.toolCalls ?? [];
  calls.forEach((call, k) => {
    const toolId = call.id ?? `toolu_${n}_${k}`;
    events.push([
      'content_block_start',
      { type: 'content_block_start', index, content_block: { type: 'tool_use', id: toolId, name: call.name, input: {} } },
    ]);
    for (const piece of pieces(JSON.stringify(call.input), pieceSize)) {
      events.push([
        'content_block_delta',
        { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } },
      ]);
    }
    events.push(['content_block_stop', { type: 'content_block_stop', index }]);
    index += 1;
  });
  events.push([
    'message_delta',
    {
      type: 'message_delta',
      delta: { stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: usage.output_tokens },
    },
  ]);
  events.push(['message_stop', { type: 'message_stop' }]);
  return events;
}

// The same reply as one non-streamed Messages response.
function jsonMessage(step: AnthropicReplyStep, n: number, model: string): unknown {
  const usage = step.usage ?? { input_tokens: 50, output_tokens: 5 };
  const calls = step.toolCalls ?? [];
  return {
    id: `msg_scripted_${n}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [
      ...(step.text === undefined ? [] : [{ type: 'text', text: step.text }]),
      ...calls.map((call, k) => ({ type: 'tool_use', id: call.id ?? `toolu_${n}_${k}`, name: call.name, input: call.input })),
    ],
    stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  };
}

function pieces(text: string, size: number): string[] {
  if (text === '') return [''];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** The `messages` of a recorded request (empty when absent). */
export function anthropicMessages(request: AnthropicRequest): Array<{ role?: unknown; content?: unknown }> {
  const messages = (request.body as { messages?: unknown } | undefined)?.messages;
  return Array.isArray(messages) ? messages : [];
}

/** Every text in a request's messages (text blocks, string contents, tool_result contents), joined. */
export function anthropicTranscript(request: AnthropicRequest): string {
  const texts: string[] = [];
  const walk = (value: unknown): void => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const block = value as { text?: unknown; content?: unknown; input?: unknown };
      if (typeof block.text === 'string') texts.push(block.text);
      if (block.content !== undefined) walk(block.content);
      if (block.input !== undefined) texts.push(JSON.stringify(block.input));
    }
  };
  for (const message of anthropicMessages(request)) walk(message.content);
  return texts.join('\n');
}

/** The tool_result blocks a request carries, in order. */
export function anthropicToolResults(request: AnthropicRequest): Array<{ toolUseId: string; content: string; isError: boolean }> {
  const out: Array<{ toolUseId: string; content: string; isError: boolean }> = [];
  for (const message of anthropicMessages(request)) {
    if (!Array.isArray(message.content)) continue;
    for (const block of message.content as Array<Record<string, unknown>>) {
      if (block?.type !== 'tool_result') continue;
      const content = block.content;
      const text =
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((part) => (typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : '')).join('')
            : '';
      out.push({ toolUseId: String(block.tool_use_id ?? ''), content: text, isError: block.is_error === true });
    }
  }
  return out;
}
