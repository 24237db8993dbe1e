import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { decodeRunnerMessage, RequestSchema, runnerFrameJsonSchema } from '../../../adapters/process-runner/wire.js';

const SCHEMA_FILE = new URL('../../../adapters/process-runner/runner-frame.schema.json', import.meta.url);

describe('RunnerFrame wire', () => {
  it('decodes event frames, tool calls and replies by their distinguishing key', () => {
    const event = decodeRunnerMessage({ attachment: 'a', turn: 'r1', event: 'assistant.delta', data: { text: 'hi' } });
    expect(event).toMatchObject({ ok: true, message: { kind: 'event' } });
    const call = decodeRunnerMessage({
      attachment: 'a',
      turn: 'r1',
      id: 't1',
      method: 'tool.call',
      params: { id: 'c1', name: 'read_file', arguments: { path: 'x' } },
    });
    expect(call).toMatchObject({ ok: true, message: { kind: 'tool.call' } });
    expect(decodeRunnerMessage({ attachment: 'a', id: '1', result: { resumed: false } })).toMatchObject({
      ok: true,
      message: { kind: 'reply' },
    });
    expect(
      decodeRunnerMessage({ attachment: 'a', id: '2', turn: 'r1', error: { code: 'provider_error', message: 'HTTP 500' } }),
    ).toMatchObject({ ok: true, message: { kind: 'reply' } });
  });

  it('refuses unknown fields, at the top and nested, naming them', () => {
    const top = decodeRunnerMessage({ attachment: 'a', turn: 'r1', event: 'assistant.delta', data: { text: 'hi' }, extra: 1 });
    expect(top).toEqual({ ok: false, problem: expect.stringContaining('extra') });
    const nested = decodeRunnerMessage({ attachment: 'a', turn: 'r1', event: 'assistant.message', data: { text: 'hi', mood: 'ok' } });
    expect(nested).toEqual({ ok: false, problem: expect.stringMatching(/at data.*mood/) });
    const usage = decodeRunnerMessage({
      attachment: 'a',
      turn: 'r1',
      event: 'assistant.message',
      data: { text: 'x', usage: { input: 1, output: 2, cached: 3 } },
    });
    expect(usage.ok).toBe(false);
  });

  it('refuses what is not a frame: arrays, unknown events, error codes outside the two', () => {
    expect(decodeRunnerMessage([1])).toEqual({ ok: false, problem: 'a frame must be a JSON object' });
    expect(decodeRunnerMessage({ attachment: 'a', turn: 'r1', event: 'thinking', data: { text: '' } }).ok).toBe(false);
    expect(decodeRunnerMessage({ attachment: 'a', id: '1', error: { code: 'oops', message: '' } }).ok).toBe(false);
    expect(decodeRunnerMessage({ attachment: 'a', id: '1' }).ok).toBe(false);
  });

  it('requests: prompt, steer and interrupt carry a turn; open, checkpoint and detach do not', () => {
    expect(RequestSchema.safeParse({ attachment: 'a', id: '1', method: 'prompt', params: { text: 'x' } }).success).toBe(false);
    expect(RequestSchema.safeParse({ attachment: 'a', id: '1', turn: 'r1', method: 'prompt', params: { text: 'x' } }).success).toBe(true);
    expect(RequestSchema.safeParse({ attachment: 'a', id: '1', turn: 'r1', method: 'detach', params: {} }).success).toBe(false);
    expect(RequestSchema.safeParse({ attachment: 'a', id: '1', method: 'checkpoint', params: {} }).success).toBe(true);
  });

  it('the published JSON Schema file is the one the zod schemas export (regenerate it when they change)', async () => {
    const published = JSON.parse(await readFile(SCHEMA_FILE, 'utf8')) as unknown;
    expect(published).toEqual(runnerFrameJsonSchema());
  });
});
