import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_PIECE_SIZES, replyChunks, sseData } from './scripted-model-sse.js';
import type { PieceSizes } from './scripted-model-sse.js';
import { isSideRequest } from './scripted-model-side.js';
import type { RecordedRequest, StaticStep, Step } from './scripted-model-steps.js';
import { listenLoopback } from './loopback-server.js';

export type {
  DynamicStep,
  HangStep,
  HttpErrorStep,
  RecordedRequest,
  ReplyStep,
  RequestKind,
  ScriptedToolCall,
  ScriptedUsage,
  StaticStep,
  Step,
} from './scripted-model-steps.js';
export { lastUserText, toolResults } from './scripted-model-steps.js';
export { droidCustomModel, SCRIPTED_MODEL_ID } from './scripted-model-droid.js';
export type { DroidCustomModelEntry } from './scripted-model-droid.js';

export interface ScriptedModelOptions extends Partial<PieceSizes> {
  /** Replies to the conversation's model calls, consumed in order. */
  steps: Step[];
  /** Answer to side requests (session title, compaction summary); default "Scripted title". */
  titleReply?: string;
  /**
   * Strict mode answers a request that finds the script exhausted, or whose body is not JSON,
   * with HTTP 400 instead of a plausible reply, so the CLI fails visibly. Default false: an
   * exhausted script replies "(script exhausted)".
   */
  strict?: boolean;
  /** The `model` reported in chunks and by `GET /v1/models`; default "scripted". */
  model?: string;
}

/** A running scripted model server. The caller must `close()` it. */
export interface ScriptedModel {
  /** `http://127.0.0.1:<port>/v1`, the `baseUrl` for droid's customModels. */
  baseUrl: string;
  port: number;
  /** Every request received, in arrival order (recorded before it is answered). */
  requests: RecordedRequest[];
  /** Number of script steps not yet consumed. */
  pending(): number;
  /** Stops listening, destroys open sockets (ending hangs and delays), resolves once closed. */
  close(): Promise<void>;
}

export const EXHAUSTED_TEXT = '(script exhausted)';

/**
 * Starts an OpenAI-compatible chat-completions server on 127.0.0.1 (a free port) that answers
 * `POST /v1/chat/completions` from a script, streaming SSE the way droid 0.225.2 accepts it.
 * Side requests (no tools, or a session-title prompt) get `titleReply` without consuming a step.
 */
export async function startScriptedModel(options: ScriptedModelOptions): Promise<ScriptedModel> {
  const steps = [...options.steps];
  const titleReply = options.titleReply ?? 'Scripted title';
  const model = options.model ?? 'scripted';
  const sizes: PieceSizes = {
    textPieceSize: options.textPieceSize ?? DEFAULT_PIECE_SIZES.textPieceSize,
    argumentPieceSize: options.argumentPieceSize ?? DEFAULT_PIECE_SIZES.argumentPieceSize,
  };
  const requests: RecordedRequest[] = [];
  const abort = new AbortController();
  let next = 0;
  let responses = 0;

  // `side` replies don't advance the numbering, so call ids (`call_<n>_<k>`) depend on the script only.
  const serve = async (step: StaticStep, res: ServerResponse, side = false): Promise<void> => {
    // Waits end early when the server closes or the client goes away.
    const gone = new AbortController();
    res.once('close', () => gone.abort());
    const signal = AbortSignal.any([abort.signal, gone.signal]);
    if ('delayMs' in step && step.delayMs !== undefined) await sleep(step.delayMs, undefined, { signal });
    if ('hangMs' in step) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.flushHeaders();
      // The reply's text chunks without the final one (finish reason and usage).
      if (step.text !== undefined)
        for (const chunk of replyChunks({ text: step.text }, responses + 1, model, sizes).slice(0, -1)) res.write(sseData(chunk));
      await sleep(step.hangMs, undefined, { signal });
      res.destroy();
      return;
    }
    if ('httpError' in step) {
      const body = step.body ?? { error: { message: `scripted error ${step.httpError}` } };
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (step.retryAfter !== undefined) headers['retry-after'] = String(step.retryAfter);
      res.writeHead(step.httpError, headers).end(JSON.stringify(body));
      return;
    }
    if (!side) responses += 1;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const chunk of replyChunks(step, side ? 0 : responses, model, sizes)) res.write(sseData(chunk));
    res.end(sseData('[DONE]'));
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const raw = await readBody(req);
    const record = (kind: RecordedRequest['kind'], body: unknown, stepIndex?: number): void => {
      const entry: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, kind };
      if (stepIndex !== undefined) entry.stepIndex = stepIndex;
      requests.push(entry);
    };
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'GET' && path === '/v1/models') {
      record('models', undefined);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'scripted' }] }));
      return;
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      record('other', raw);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      record('other', raw);
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"body is not JSON"}}');
      return;
    }
    if (isSideRequest(body)) {
      record('side', body);
      await serve({ text: titleReply }, res, true);
      return;
    }
    if (next >= steps.length) {
      record('exhausted', body);
      if (options.strict === true) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'scripted model: script exhausted' } }));
        return;
      }
      await serve({ text: EXHAUSTED_TEXT }, res);
      return;
    }
    const stepIndex = next;
    next += 1;
    record('step', body, stepIndex);
    const step = steps[stepIndex] as Step;
    await serve(typeof step === 'function' ? step(requests.at(-1) as RecordedRequest) : step, res);
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

// Collects the request body as UTF-8 (droid's bodies are a few hundred KB at most).
async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}
