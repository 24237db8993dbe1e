#!/usr/bin/env node
// The reference RunnerFrame runner (docs/process-runner.md): a small model loop over an
// OpenAI-compatible chat-completions endpoint (streaming, tool calls). One Works owns the tools;
// this loop owns the conversation, kept append-only in <dir>/conversation.jsonl (its native
// state). Credentials arrive only in the open frame. No dependencies: `node openai-runner.mjs`.
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const STATE_FILE = 'conversation.jsonl';
const MAX_STEPS = 50;
const SYSTEM = 'You are a coding agent. Use the tools to inspect and change the workspace. Answer briefly.';

/** attachment → { dir, model, tools, provider, messages, turn } */
const attachments = new Map();
/** tool.call id → resolve(result) */
const toolWaits = new Map();
let nextToolId = 0;

function write(frame) {
  process.stdout.write(`${JSON.stringify(frame)}\n`);
}

function reply(request, body) {
  write({ attachment: request.attachment, id: request.id, ...(request.turn ? { turn: request.turn } : {}), ...body });
}

function append(state, message) {
  state.messages.push(message);
  appendFileSync(join(state.dir, STATE_FILE), `${JSON.stringify(message)}\n`);
}

function open(request) {
  const { dir, config, tools, provider } = request.params;
  const file = join(dir, STATE_FILE);
  // Passive: reading the state only; no model or tool call until the next prompt.
  const messages = existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line))
    : [];
  attachments.set(request.attachment, { dir, model: config.model, tools, provider, messages, turn: undefined });
  reply(request, { result: { resumed: messages.length > 0 } });
}

function toolCall(attachment, turn, call) {
  nextToolId += 1;
  const id = `t${nextToolId}`;
  return new Promise((resolve) => {
    toolWaits.set(id, resolve);
    write({ attachment, turn, id, method: 'tool.call', params: call });
  });
}

// Reads an SSE response: streams text deltas, collects tool calls and usage.
async function readStream(response, emit) {
  const decoder = new TextDecoder();
  let buffer = '';
  let text = '';
  let finish;
  let usage;
  const calls = [];
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf('\n');
    while (newline !== -1) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
      if (!line.startsWith('data:')) continue;
      const data = line.slice(5).trim();
      if (data === '[DONE]') continue;
      const event = JSON.parse(data);
      if (event.usage) usage = { input: event.usage.prompt_tokens ?? 0, output: event.usage.completion_tokens ?? 0 };
      const choice = event.choices?.[0];
      if (!choice) continue;
      if (choice.finish_reason) finish = choice.finish_reason;
      const delta = choice.delta ?? {};
      if (typeof delta.content === 'string' && delta.content !== '') {
        text += delta.content;
        emit('assistant.delta', { text: delta.content });
      }
      for (const part of delta.tool_calls ?? []) {
        const call = (calls[part.index ?? 0] ??= { id: '', name: '', arguments: '' });
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
      }
    }
  }
  return { text, finish: finish ?? 'stop', usage, calls: calls.filter(Boolean) };
}

async function prompt(request) {
  const state = attachments.get(request.attachment);
  if (!state) return reply(request, { error: { code: 'runner_error', message: 'prompt before open' } });
  if (!state.provider.baseUrl) return reply(request, { error: { code: 'provider_error', message: 'no provider baseUrl' } });
  const turn = { id: request.turn, abort: new AbortController(), steering: [] };
  state.turn = turn;
  const emit = (event, data) => write({ attachment: request.attachment, turn: request.turn, event, data });
  try {
    append(state, { role: 'user', content: request.params.text });
    for (let step = 0; step < MAX_STEPS; step += 1) {
      for (const text of turn.steering.splice(0)) append(state, { role: 'user', content: text });
      if (turn.abort.signal.aborted) return reply(request, { result: { stop_reason: 'interrupted' } });
      const response = await fetch(`${state.provider.baseUrl.replace(/\/$/, '')}/chat/completions`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(state.provider.apiKey ? { authorization: `Bearer ${state.provider.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: state.model ?? 'default',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'system', content: SYSTEM }, ...state.messages],
          tools: state.tools.map((tool) => ({
            type: 'function',
            function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
          })),
        }),
        signal: turn.abort.signal,
      });
      if (!response.ok) {
        const body = (await response.text()).slice(0, 500);
        return reply(request, { error: { code: 'provider_error', message: `HTTP ${response.status}: ${body}` } });
      }
      const { text, finish, usage, calls } = await readStream(response, emit);
      emit('assistant.message', { text, ...(usage ? { usage } : {}), stop_reason: finish });
      append(state, {
        role: 'assistant',
        content: text === '' ? null : text,
        ...(calls.length > 0
          ? { tool_calls: calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } })) }
          : {}),
      });
      // A steer that came while the model answered is its next request's last user message.
      if (calls.length === 0 && turn.steering.length === 0) return reply(request, { result: { stop_reason: finish } });
      if (calls.length === 0) continue;
      const results = await Promise.all(
        calls.map((call) => {
          let args;
          try {
            args = call.arguments === '' ? {} : JSON.parse(call.arguments);
          } catch {
            return Promise.resolve({ content: `arguments are not JSON: ${call.arguments.slice(0, 200)}`, is_error: true });
          }
          return toolCall(request.attachment, request.turn, { id: call.id, name: call.name, arguments: args });
        }),
      );
      // Every call gets its result in the conversation, also when interrupted, so the history stays valid.
      for (const [index, result] of results.entries()) {
        append(state, { role: 'tool', tool_call_id: calls[index].id, content: result.content });
      }
    }
    return reply(request, { result: { stop_reason: 'max_steps' } });
  } catch (error) {
    if (turn.abort.signal.aborted) return reply(request, { result: { stop_reason: 'interrupted' } });
    const cause = error?.cause?.message ? `: ${error.cause.message}` : '';
    return reply(request, { error: { code: 'provider_error', message: `${String(error?.message ?? error)}${cause}` } });
  } finally {
    state.turn = undefined;
  }
}

function checkpoint(request) {
  const state = attachments.get(request.attachment);
  const file = join(state.dir, STATE_FILE);
  const files = existsSync(file) ? [{ path: STATE_FILE, size: statSync(file).size }] : [];
  reply(request, { result: { files } });
}

function onLine(line) {
  if (line.trim() === '') return;
  const frame = JSON.parse(line);
  if (frame.method === undefined && frame.result !== undefined) {
    const resolve = toolWaits.get(frame.id);
    toolWaits.delete(frame.id);
    resolve?.(frame.result);
    return;
  }
  const state = attachments.get(frame.attachment);
  switch (frame.method) {
    case 'open':
      return open(frame);
    case 'prompt':
      return void prompt(frame);
    case 'interrupt':
      state?.turn?.abort.abort();
      return reply(frame, { result: {} });
    case 'steer':
      // Added to the running turn: the next model request carries it as a user message.
      if (!state?.turn || state.turn.id !== frame.turn) return reply(frame, { error: { code: 'runner_error', message: 'no such live turn' } });
      state.turn.steering.push(frame.params.text);
      return reply(frame, { result: {} });
    case 'checkpoint':
      return checkpoint(frame);
    case 'detach':
      attachments.delete(frame.attachment);
      return reply(frame, { result: {} });
    default:
      return reply(frame, { error: { code: 'runner_error', message: `unknown method ${frame.method}` } });
  }
}

createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY }).on('line', onLine).on('close', () => process.exit(0));
