import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { droidCustomModel, EXHAUSTED_TEXT, startScriptedModel, toolResults } from './scripted-model.js';
import type { ScriptedModel, ScriptedModelOptions } from './scripted-model.js';

const TOOLS = [{ type: 'function', function: { name: 'Execute', parameters: { type: 'object' } } }];
const started: ScriptedModel[] = [];

async function start(options: ScriptedModelOptions): Promise<ScriptedModel> {
  const model = await startScriptedModel(options);
  started.push(model);
  return model;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((model) => model.close()));
});

// A conversation call the way droid makes it: tools present, streaming.
function chat(model: ScriptedModel, messages: object[], extra: object = {}): Promise<Response> {
  return fetch(`${model.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-unit' },
    body: JSON.stringify({ model: 'scripted', stream: true, tools: TOOLS, messages, ...extra }),
  });
}

interface ToolCallPart {
  index: number;
  id?: string;
  type?: string;
  function: { name?: string; arguments: string };
}
interface Delta {
  role?: string;
  content?: string;
  reasoning_content?: string;
  tool_calls?: ToolCallPart[];
}
interface Chunk {
  choices: { index: number; delta: Delta; finish_reason: string | null }[];
  usage?: unknown;
}

// Splits an SSE body into its data payloads; the last one must be [DONE].
async function events(response: Response): Promise<{ chunks: Chunk[]; done: boolean }> {
  const payloads = (await response.text())
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      expect(block.startsWith('data: ')).toBe(true);
      return block.slice('data: '.length);
    });
  const done = payloads.at(-1) === '[DONE]';
  return { chunks: payloads.filter((payload) => payload !== '[DONE]').map((payload) => JSON.parse(payload) as Chunk), done };
}

const first = (chunk: Chunk | undefined): Chunk['choices'][number] => chunk?.choices[0] ?? expect.unreachable('no choice');
const deltas = (chunks: Chunk[]): Delta[] => chunks.map((chunk) => first(chunk).delta);
const textOf = (chunks: Chunk[]): string =>
  deltas(chunks)
    .map((delta) => delta.content ?? '')
    .join('');

describe('startScriptedModel', () => {
  it('streams text in pieces, then finish_reason stop with usage, then [DONE]', async () => {
    const model = await start({ steps: [{ text: 'Hello from the scripted model.' }], textPieceSize: 5 });
    const response = await chat(model, [{ role: 'user', content: 'hi' }]);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const { chunks, done } = await events(response);
    expect(done).toBe(true);
    const pieces = deltas(chunks)
      .map((delta) => delta.content)
      .filter((content) => content !== undefined);
    expect(pieces.every((piece) => (piece ?? '').length <= 5)).toBe(true);
    expect(pieces.join('')).toBe('Hello from the scripted model.');
    expect(deltas(chunks)[0]?.role).toBe('assistant');
    const last = chunks.at(-1);
    expect(first(last).finish_reason).toBe('stop');
    expect(last?.usage).toEqual({ prompt_tokens: 60, completion_tokens: 4, total_tokens: 64 });
    expect(model.pending()).toBe(0);
    expect(model.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions', kind: 'step', stepIndex: 0 });
    expect(model.requests[0]?.headers.authorization).toBe('Bearer sk-unit');
  });

  it('streams several tool calls with their arguments in pieces, then finish_reason tool_calls', async () => {
    const calls = [
      { name: 'Execute', arguments: { command: 'echo hi > out.txt', riskLevel: 'medium', riskLevelReason: 'writes a file' } },
      { name: 'LS', arguments: { directory_path: '/tmp' } },
    ];
    const model = await start({ steps: [{ thinking: 'Let me think.', text: 'Working.', toolCalls: calls }], argumentPieceSize: 7 });
    const { chunks, done } = await events(await chat(model, [{ role: 'user', content: 'go' }]));
    expect(done).toBe(true);
    const all = deltas(chunks);
    expect(all.map((delta) => delta.reasoning_content ?? '').join('')).toBe('Let me think.');
    expect(all.map((delta) => delta.content ?? '').join('')).toBe('Working.');
    const parts = all.flatMap((delta) => delta.tool_calls ?? []);
    const headers = parts.filter((part) => part.id !== undefined);
    expect(headers).toEqual([
      { index: 0, id: 'call_1_0', type: 'function', function: { name: 'Execute', arguments: '' } },
      { index: 1, id: 'call_1_1', type: 'function', function: { name: 'LS', arguments: '' } },
    ]);
    for (const [index, call] of calls.entries()) {
      const pieces = parts.filter((part) => part.index === index && part.id === undefined).map((part) => part.function.arguments);
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.every((piece) => piece.length <= 7)).toBe(true);
      expect(JSON.parse(pieces.join(''))).toEqual(call.arguments);
    }
    expect(first(chunks.at(-1)).finish_reason).toBe('tool_calls');
  });

  it('answers an httpError step with its status, JSON body and retry-after', async () => {
    const model = await start({
      steps: [
        { httpError: 429, retryAfter: 1 },
        { httpError: 500, body: { error: { message: 'boom' } } },
      ],
    });
    const first = await chat(model, []);
    expect(first.status).toBe(429);
    expect(first.headers.get('retry-after')).toBe('1');
    expect(await first.json()).toEqual({ error: { message: 'scripted error 429' } });
    const second = await chat(model, []);
    expect(second.status).toBe(500);
    expect(await second.json()).toEqual({ error: { message: 'boom' } });
    expect(model.pending()).toBe(0);
  });

  it('answers a session-title side request without consuming a step', async () => {
    const model = await start({ steps: [{ text: 'conversation reply' }], titleReply: 'A title' });
    const side = await fetch(`${model.baseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({
        stream: true,
        messages: [
          { role: 'system', content: 'You are a helper that generates concise session titles.' },
          { role: 'user', content: 'hi' },
        ],
      }),
    });
    expect(textOf((await events(side)).chunks)).toBe('A title');
    expect(model.pending()).toBe(1);
    const titledWithTools = await chat(model, [{ role: 'system', content: 'Generate concise session titles.' }]);
    expect(textOf((await events(titledWithTools)).chunks)).toBe('A title');
    expect(model.pending()).toBe(1);
    const main = await events(await chat(model, [{ role: 'user', content: 'hi' }]));
    expect(textOf(main.chunks)).toBe('conversation reply');
    expect(model.requests.map((request) => request.kind)).toEqual(['side', 'side', 'step']);
  });

  it('computes dynamic steps from the request, e.g. echoing a tool result', async () => {
    const model = await start({ steps: [(request) => ({ text: `saw: ${toolResults(request)[0]?.content ?? 'nothing'}` })] });
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'tool', tool_call_id: 'call_1_0', content: 'hi\n' },
    ];
    const { chunks } = await events(await chat(model, messages));
    expect(textOf(chunks)).toBe('saw: hi\n');
  });

  it('replies "(script exhausted)" when the script ran out, and HTTP 400 in strict mode', async () => {
    const lenient = await start({ steps: [] });
    const { chunks } = await events(await chat(lenient, []));
    expect(textOf(chunks)).toBe(EXHAUSTED_TEXT);
    expect(lenient.requests[0]?.kind).toBe('exhausted');
    const strict = await start({ steps: [], strict: true });
    expect((await chat(strict, [])).status).toBe(400);
    expect(strict.requests[0]?.kind).toBe('exhausted');
  });

  it('lists its model on GET /v1/models', async () => {
    const model = await start({ steps: [], model: 'scripted' });
    const body = (await (await fetch(`${model.baseUrl}/models`)).json()) as { data: { id: string }[] };
    expect(body.data.map((entry) => entry.id)).toEqual(['scripted']);
    expect(model.requests[0]?.kind).toBe('models');
  });

  it('drops a hanging response without [DONE]', async () => {
    const model = await start({ steps: [{ hangMs: 50 }] });
    const response = await chat(model, []);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
  });

  it("streams a hanging step's text (no finish) before it hangs", async () => {
    const model = await start({ steps: [{ hangMs: 600_000, text: 'Half an answer' }] });
    const response = await chat(model, []);
    const reader = response.body!.getReader();
    type Chunk = { choices: { delta: { content?: string }; finish_reason: string | null }[] };
    const chunksOf = (raw: string): Chunk[] =>
      raw
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => JSON.parse(line.slice(6)) as Chunk);
    const textOf = (raw: string): string =>
      chunksOf(raw)
        .map((c) => c.choices[0]?.delta.content ?? '')
        .join('');
    let received = '';
    // The pieces come while the response hangs: read until the whole text arrived (a test timeout fails it).
    while (textOf(received.slice(0, received.lastIndexOf('\n') + 1)) !== 'Half an answer') {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended early: ${received}`);
      received += new TextDecoder().decode(value);
    }
    expect(chunksOf(received).every((c) => c.choices[0]?.finish_reason === null)).toBe(true);
    await reader.cancel();
  });

  it('frees its port on close, ending requests still hanging', async () => {
    const model = await startScriptedModel({ steps: [{ hangMs: 600_000 }] });
    const response = await chat(model, []);
    const body = response.text();
    await model.close();
    await expect(body).rejects.toThrow();
    await expect(fetch(`${model.baseUrl}/models`)).rejects.toThrow();
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(model.port, '127.0.0.1', () => resolve());
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});

describe('droidCustomModel', () => {
  it('builds the customModels entry and the id droid derives for it', () => {
    const { entry, modelId } = droidCustomModel('http://127.0.0.1:1/v1', { displayName: 'Scripted', apiKey: 'sk-x' });
    expect(entry).toEqual({
      model: 'scripted',
      displayName: 'Scripted',
      baseUrl: 'http://127.0.0.1:1/v1',
      apiKey: 'sk-x',
      provider: 'generic-chat-completion-api',
      maxOutputTokens: 1000,
    });
    expect(modelId).toBe('custom:Scripted-0');
    expect(droidCustomModel('http://x/v1', { displayName: 'My  Model' }).modelId).toBe('custom:My-Model-0');
  });
});
