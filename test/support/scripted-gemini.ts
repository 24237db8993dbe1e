import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { listenLoopback } from './loopback-server.js';

/**
 * A scripted Gemini API server on 127.0.0.1, for driving the real Gemini CLI offline
 * (GOOGLE_GEMINI_BASE_URL). It answers `POST /v1beta/models/<model>:streamGenerateContent?alt=sse`
 * with SSE `data:` lines, each a full GenerateContentResponse (text parts, then functionCall
 * parts), the way other-agents.md §3 records Gemini CLI 0.61.0 accepting it; `:generateContent`
 * (JSON-schema side calls) gets a one-part JSON reply without consuming a step, `:countTokens` a
 * count. Every request is recorded so tests can assert what the model saw.
 */

export interface GeminiFunctionCall {
  name: string;
  args: Record<string, unknown>;
}

/** A reply: text, then function calls (finishReason STOP either way, as the API does). */
export interface GeminiReplyStep {
  text?: string;
  functionCalls?: GeminiFunctionCall[];
  /** The reply's token counts (`usageMetadata`); default 12 prompt, 5 candidates. */
  usage?: { promptTokenCount: number; candidatesTokenCount: number };
}

export type GeminiStep = GeminiReplyStep | ((request: GeminiRequest) => GeminiReplyStep);

/** `step` consumed a script step; `side` a generateContent call; `count` countTokens; `exhausted`; `other` (404). */
export type GeminiRequestKind = 'step' | 'side' | 'count' | 'exhausted' | 'other';

export interface GeminiRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  kind: GeminiRequestKind;
}

export interface ScriptedGemini {
  /** `http://127.0.0.1:<port>` (no /v1beta), the value of GOOGLE_GEMINI_BASE_URL. */
  baseUrl: string;
  requests: GeminiRequest[];
  close(): Promise<void>;
}

export const GEMINI_EXHAUSTED_TEXT = '(script exhausted)';

export async function startScriptedGemini(options: { steps: GeminiStep[] }): Promise<ScriptedGemini> {
  const steps = [...options.steps];
  const requests: GeminiRequest[] = [];
  const server = await listenLoopback(async (req: IncomingMessage, res: ServerResponse) => {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = raw === '' ? undefined : JSON.parse(raw);
    } catch {
      body = raw;
    }
    const url = req.url ?? '';
    const record: GeminiRequest = { method: req.method ?? '', path: url, headers: req.headers, body, kind: 'other' };
    requests.push(record);
    if (req.method === 'POST' && url.includes(':streamGenerateContent')) {
      const next = steps.shift();
      record.kind = next ? 'step' : 'exhausted';
      const step = typeof next === 'function' ? next(record) : (next ?? { text: GEMINI_EXHAUSTED_TEXT });
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const response of replyFrames(step)) res.write(`data: ${JSON.stringify(response)}\n\n`);
      res.end();
      return;
    }
    if (req.method === 'POST' && url.includes(':generateContent')) {
      record.kind = 'side';
      sendJson(res, 200, { candidates: [{ content: { role: 'model', parts: [{ text: '{}' }] }, finishReason: 'STOP', index: 0 }] });
      return;
    }
    if (req.method === 'POST' && url.includes(':countTokens')) {
      record.kind = 'count';
      sendJson(res, 200, { totalTokens: 10 });
      return;
    }
    sendJson(res, 404, { error: { code: 404, message: `scripted Gemini has no ${req.method} ${url}`, status: 'NOT_FOUND' } });
  });
  return { baseUrl: `http://127.0.0.1:${server.port}`, requests, close: () => server.close() };
}

// The text first (one frame), then one frame with the function calls and the usage.
function replyFrames(step: GeminiReplyStep): unknown[] {
  const frames: unknown[] = [];
  const counts = step.usage ?? { promptTokenCount: 12, candidatesTokenCount: 5 };
  const usageMetadata = { ...counts, totalTokenCount: counts.promptTokenCount + counts.candidatesTokenCount };
  const frame = (parts: unknown[], last: boolean) => ({
    candidates: [{ content: { role: 'model', parts }, ...(last ? { finishReason: 'STOP' } : {}), index: 0 }],
    ...(last ? { usageMetadata } : {}),
    modelVersion: 'scripted',
  });
  const calls = (step.functionCalls ?? []).map((call) => ({ functionCall: { name: call.name, args: call.args } }));
  if (step.text) frames.push(frame([{ text: step.text }], calls.length === 0));
  if (calls.length > 0 || frames.length === 0) frames.push(frame(calls.length > 0 ? calls : [{ text: '' }], true));
  return frames;
}

/** The functionResponse parts of a request (what the CLI sent back for earlier calls). */
export function geminiFunctionResponses(request: GeminiRequest): Array<{ name: string; id?: string; output: string }> {
  const contents = ((request.body as { contents?: unknown[] } | undefined)?.contents ?? []) as Array<{ parts?: unknown[] }>;
  const out: Array<{ name: string; id?: string; output: string }> = [];
  for (const content of contents) {
    for (const part of content.parts ?? []) {
      const response = (part as { functionResponse?: { name?: string; id?: string; response?: { output?: unknown } } }).functionResponse;
      if (response?.name) {
        out.push({
          name: response.name,
          ...(response.id ? { id: response.id } : {}),
          output: typeof response.response?.output === 'string' ? response.response.output : JSON.stringify(response.response ?? {}),
        });
      }
    }
  }
  return out;
}

/** Every text part of a request's contents, joined (to check what the conversation carries). */
export function geminiTranscript(request: GeminiRequest): string {
  return JSON.stringify((request.body as { contents?: unknown } | undefined)?.contents ?? []);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}
