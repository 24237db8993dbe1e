import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { listenLoopback } from './loopback-server.js';

/**
 * A scripted OpenAI **Responses** API server on 127.0.0.1, for driving the real Codex CLI offline
 * (a model provider with `wire_api = "responses"` whose `base_url` is `<baseUrl>/v1`; Codex
 * appends `/responses`). It answers `POST /v1/responses` with streamed SSE the way the API does
 * (response.created, response.in_progress, output items with streamed text or function-call
 * arguments, response.completed with usage; every frame with a `sequence_number`), and records
 * every request so tests can assert what the model saw (other-agents.md §2, re-checked on 0.171.0).
 */

/** One function call; `arguments` is serialised and streamed in `pieceSize` pieces. */
export interface ResponsesToolCall {
  /** Codex 0.171.0's shell tool is `exec_command` with `{ cmd }`. */
  name: string;
  arguments: Record<string, unknown>;
  /** Default `call_<n>_<k>`: n counts replies from 1, k the call. */
  callId?: string;
}

/**
 * One call of a freeform (`custom`) tool, e.g. Codex's `apply_patch`, which 0.171.0 offers only to
 * models it knows (gpt-5.5): `input` is the raw text, streamed in `pieceSize` pieces.
 */
export interface ResponsesCustomToolCall {
  name: string;
  input: string;
  /** Default `call_<n>_c<k>`. */
  callId?: string;
}

/** A 200 reply: a text message, then function calls, then custom tool calls. */
export interface ResponsesReplyStep {
  text?: string;
  toolCalls?: ResponsesToolCall[];
  customToolCalls?: ResponsesCustomToolCall[];
  usage?: { input_tokens: number; output_tokens: number; cached_tokens?: number; reasoning_tokens?: number };
  /** Waits before the response headers. */
  delayMs?: number;
  /** Holds the reply (before the response headers) until this settles, e.g. a test's release. */
  holdUntil?: Promise<unknown>;
}

export interface ResponsesErrorStep {
  httpError: number;
  body?: unknown;
}

/** Sends the SSE headers, then nothing for `hangMs`, then drops the connection. */
export interface ResponsesHangStep {
  hangMs: number;
}

export type ResponsesStaticStep = ResponsesReplyStep | ResponsesErrorStep | ResponsesHangStep;
export type ResponsesStep = ResponsesStaticStep | ((request: ResponsesRequest) => ResponsesStaticStep);

/** `step` consumed a script step; `exhausted`: none left (answered with text); `other`: 404. */
export type ResponsesRequestKind = 'step' | 'exhausted' | 'other';

export interface ResponsesRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  kind: ResponsesRequestKind;
  stepIndex?: number;
}

export interface ScriptedResponsesOptions {
  steps: ResponsesStep[];
  /** Size of the text and argument pieces; default 7. */
  pieceSize?: number;
  /** The model reported in the response; default "scripted". */
  model?: string;
}

/** A running server. The caller must `close()` it. */
export interface ScriptedResponses {
  /** `http://127.0.0.1:<port>/v1`: the provider's base_url. */
  baseUrl: string;
  port: number;
  requests: ResponsesRequest[];
  /** Script steps not consumed yet. */
  pending(): number;
  close(): Promise<void>;
}

export const RESPONSES_EXHAUSTED_TEXT = '(script exhausted)';

export async function startScriptedResponses(options: ScriptedResponsesOptions): Promise<ScriptedResponses> {
  const steps = [...options.steps];
  const pieceSize = options.pieceSize ?? 7;
  const model = options.model ?? 'scripted';
  const requests: ResponsesRequest[] = [];
  const abort = new AbortController();
  let next = 0;
  let replies = 0;

  const serve = async (step: ResponsesStaticStep, res: ServerResponse): Promise<void> => {
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const signal = AbortSignal.any([abort.signal, gone.signal]);
    if ('delayMs' in step && step.delayMs !== undefined) await sleep(step.delayMs, undefined, { signal });
    if ('holdUntil' in step && step.holdUntil) {
      const gave = new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      await Promise.race([step.holdUntil, gave]);
      if (signal.aborted) return;
    }
    if ('hangMs' in step) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      await sleep(step.hangMs, undefined, { signal });
      res.destroy();
      return;
    }
    if ('httpError' in step) {
      const body = step.body ?? { error: { type: 'server_error', code: null, message: `scripted error ${step.httpError}` } };
      res.writeHead(step.httpError, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      return;
    }
    replies += 1;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    responseEvents(step, replies, model, pieceSize).forEach(([event, data], sequence) => {
      res.write(`event: ${event}\ndata: ${JSON.stringify({ ...data, sequence_number: sequence })}\n\n`);
    });
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
    const record = (kind: ResponsesRequestKind, stepIndex?: number): void => {
      const entry: ResponsesRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, kind };
      if (stepIndex !== undefined) entry.stepIndex = stepIndex;
      requests.push(entry);
    };
    if (req.method !== 'POST' || path !== '/v1/responses' || typeof body !== 'object' || body === null) {
      record('other');
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"type":"not_found","message":"not found"}}');
      return;
    }
    if (next >= steps.length) {
      record('exhausted');
      await serve({ text: RESPONSES_EXHAUSTED_TEXT }, res);
      return;
    }
    const stepIndex = next;
    next += 1;
    record('step', stepIndex);
    const step = steps[stepIndex] as ResponsesStep;
    await serve(typeof step === 'function' ? step(requests.at(-1) as ResponsesRequest) : step, res);
  };

  const listening = await listenLoopback(handle);
  const { port } = listening;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    pending: () => steps.length - next,
    close: async () => {
      abort.abort();
      await listening.close();
    },
  };
}

type Frame = [string, Record<string, unknown>];

// The SSE events of one streamed Responses reply, in the API's order (sequence numbers added by the caller).
function responseEvents(step: ResponsesReplyStep, n: number, model: string, pieceSize: number): Frame[] {
  const id = `resp_scripted_${n}`;
  const created = { id, object: 'response', created_at: 0, status: 'in_progress', model, output: [] };
  const events: Frame[] = [
    ['response.created', { type: 'response.created', response: created }],
    ['response.in_progress', { type: 'response.in_progress', response: created }],
  ];
  const output: Record<string, unknown>[] = [];
  if (step.text !== undefined) {
    const index = output.length;
    const itemId = `msg_${n}_${index}`;
    const part = { type: 'output_text', text: '', annotations: [] };
    events.push([
      'response.output_item.added',
      {
        type: 'response.output_item.added',
        output_index: index,
        item: { id: itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      },
    ]);
    events.push([
      'response.content_part.added',
      { type: 'response.content_part.added', item_id: itemId, output_index: index, content_index: 0, part },
    ]);
    for (const piece of pieces(step.text, pieceSize)) {
      events.push([
        'response.output_text.delta',
        { type: 'response.output_text.delta', item_id: itemId, output_index: index, content_index: 0, delta: piece },
      ]);
    }
    events.push([
      'response.output_text.done',
      { type: 'response.output_text.done', item_id: itemId, output_index: index, content_index: 0, text: step.text },
    ]);
    const done = { ...part, text: step.text };
    events.push([
      'response.content_part.done',
      { type: 'response.content_part.done', item_id: itemId, output_index: index, content_index: 0, part: done },
    ]);
    const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [done] };
    events.push(['response.output_item.done', { type: 'response.output_item.done', output_index: index, item }]);
    output.push(item);
  }
  (step.toolCalls ?? []).forEach((call, k) => {
    const index = output.length;
    const itemId = `fc_${n}_${k}`;
    const callId = call.callId ?? `call_${n}_${k}`;
    const args = JSON.stringify(call.arguments);
    events.push([
      'response.output_item.added',
      {
        type: 'response.output_item.added',
        output_index: index,
        item: { id: itemId, type: 'function_call', status: 'in_progress', call_id: callId, name: call.name, arguments: '' },
      },
    ]);
    for (const piece of pieces(args, pieceSize)) {
      events.push([
        'response.function_call_arguments.delta',
        { type: 'response.function_call_arguments.delta', item_id: itemId, output_index: index, delta: piece },
      ]);
    }
    events.push([
      'response.function_call_arguments.done',
      { type: 'response.function_call_arguments.done', item_id: itemId, output_index: index, arguments: args },
    ]);
    const item = { id: itemId, type: 'function_call', status: 'completed', call_id: callId, name: call.name, arguments: args };
    events.push(['response.output_item.done', { type: 'response.output_item.done', output_index: index, item }]);
    output.push(item);
  });
  (step.customToolCalls ?? []).forEach((call, k) => {
    const index = output.length;
    const itemId = `ctc_${n}_${k}`;
    const callId = call.callId ?? `call_${n}_c${k}`;
    const added = { id: itemId, type: 'custom_tool_call', status: 'in_progress', call_id: callId, name: call.name, input: '' };
    events.push(['response.output_item.added', { type: 'response.output_item.added', output_index: index, item: added }]);
    for (const piece of pieces(call.input, pieceSize)) {
      events.push([
        'response.custom_tool_call_input.delta',
        { type: 'response.custom_tool_call_input.delta', item_id: itemId, output_index: index, delta: piece },
      ]);
    }
    events.push([
      'response.custom_tool_call_input.done',
      { type: 'response.custom_tool_call_input.done', item_id: itemId, output_index: index, input: call.input },
    ]);
    const item = { ...added, status: 'completed', input: call.input };
    events.push(['response.output_item.done', { type: 'response.output_item.done', output_index: index, item }]);
    output.push(item);
  });
  const usage = step.usage ?? { input_tokens: 50, output_tokens: 5 };
  events.push([
    'response.completed',
    {
      type: 'response.completed',
      response: {
        ...created,
        status: 'completed',
        output,
        usage: {
          input_tokens: usage.input_tokens,
          input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
          output_tokens: usage.output_tokens,
          output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
          total_tokens: usage.input_tokens + usage.output_tokens,
        },
      },
    },
  ]);
  return events;
}

function pieces(text: string, size: number): string[] {
  if (text === '') return [''];
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

// Codex 0.171.0 sent uncompressed bodies; gzip is undone in case a version compresses them.
async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const raw = Buffer.concat(parts);
  return (req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
}

/** The `input` items of a recorded request (empty when absent). */
export function responsesInput(request: ResponsesRequest): Array<Record<string, unknown>> {
  const input = (request.body as { input?: unknown } | undefined)?.input;
  return Array.isArray(input) ? (input as Array<Record<string, unknown>>) : [];
}

/** Every text in a request's input (message contents, function calls' arguments and outputs), joined. */
export function responsesTranscript(request: ResponsesRequest): string {
  const texts: string[] = [];
  for (const item of responsesInput(request)) {
    if (typeof item.arguments === 'string') texts.push(item.arguments);
    if (typeof item.output === 'string') texts.push(item.output);
    const content = item.content;
    if (typeof content === 'string') texts.push(content);
    else if (Array.isArray(content)) {
      for (const part of content as Array<{ text?: unknown }>) if (typeof part?.text === 'string') texts.push(part.text);
    }
  }
  return texts.join('\n');
}

/** The `function_call_output` (and `custom_tool_call_output`) items of a request, in order. */
export function responsesToolOutputs(request: ResponsesRequest): Array<{ callId: string; output: string }> {
  return responsesInput(request)
    .filter((item) => item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
    .map((item) => ({
      callId: String(item.call_id ?? ''),
      output: typeof item.output === 'string' ? item.output : JSON.stringify(item.output),
    }));
}
