import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isNotification, notificationOf, RawDroidError } from '../support/raw-droid-client.js';
import type { RawFrame } from '../support/raw-droid-client.js';
import { FAKE_DROID_WRAPPER, writeFakeDroidBinary } from './fake-droid-binary.js';
import { FakeDroidFleet, initialize, makeDirs } from './fake-droid-harness.js';
import type { FakeDroidDirs } from './fake-droid-harness.js';

const run = promisify(execFile);
const fleet = new FakeDroidFleet();
let dirs: FakeDroidDirs;

beforeEach(async () => {
  dirs = await makeDirs();
});

afterEach(async () => {
  await fleet.closeAll();
  await dirs.dispose();
});

const deltaText = (frames: RawFrame[]): string =>
  frames
    .map((frame) => notificationOf(frame))
    .filter((n) => n?.type === 'assistant_text_delta')
    .map((n) => String(n?.textDelta))
    .join('');

describe('fake droid CLI surface', () => {
  it('answers --version with FAKE_DROID_VERSION (default 0.225.2)', async () => {
    expect((await run(FAKE_DROID_WRAPPER, ['--version'])).stdout.trim()).toBe('0.225.2');
    const custom = await run(FAKE_DROID_WRAPPER, ['--version'], { env: { ...process.env, FAKE_DROID_VERSION: '0.215.0' } });
    expect(custom.stdout.trim()).toBe('0.215.0');
  });

  it('refuses an unknown fault name with exit code 2', async () => {
    const failure = run(FAKE_DROID_WRAPPER, ['--version'], { env: { ...process.env, FAKE_DROID_FAULT: 'nope' } });
    await expect(failure).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('unknown FAKE_DROID_FAULT "nope"') });
  });

  it('runs from a generated binary with its options baked in, whatever the environment', async () => {
    const binary = await writeFakeDroidBinary(dirs.home, { version: '9.8.7', protocol: '1.206.0' });
    expect((await run(binary, ['--version'], { env: {} })).stdout.trim()).toBe('9.8.7');
    const client = await fleet.start(dirs, {}, binary);
    await initialize(client, dirs.workspace);
    expect(client.frames.every((frame) => frame.factoryProtocolVersion === '1.206.0')).toBe(true);
  });
});

describe('fake droid wire protocol', () => {
  it('initialises a session: settings_updated before the result, droid envelope on every frame', async () => {
    const client = await fleet.start(dirs);
    const result = await initialize(client, dirs.workspace);
    expect(result).toMatchObject({ session: { messages: [] }, settings: { modelId: 'gpt-5.6-sol', autonomyLevel: 'off' } });
    expect(typeof result.sessionId).toBe('string');
    expect(Array.isArray(result.availableModels)).toBe(true);
    const responseIndex = client.frames.findIndex((frame) => frame.type === 'response');
    expect(client.frames.slice(0, responseIndex).some((frame) => isNotification(frame, 'settings_updated'))).toBe(true);
    for (const frame of client.frames) {
      expect(frame).toMatchObject({ jsonrpc: '2.0', factoryApiVersion: '1.0.0', factoryProtocolVersion: '1.220.0' });
    }
  });

  it('runs a turn: {} first, then the user message with its id, deltas, the assistant message and agent_turn_completed', async () => {
    const client = await fleet.start(dirs, { FAKE_DROID_REPLY: 'A scripted answer that spans pieces.' });
    await initialize(client, dirs.workspace);
    await client.request('droid.update_session_settings', { modelId: 'custom:Scripted-0', autonomyLevel: 'low' });
    const turn = await client.runTurn('say hello', { messageId: 'turn-1' });
    expect(turn.completion).toMatchObject({ type: 'agent_turn_completed', reason: 'completed', turnId: 'turn-1' });
    const notifications = turn.frames.map(notificationOf);
    const user = notifications.find(
      (n) =>
        n?.type === 'create_message' && (n.message as { role: string }).role === 'user' && (n.message as { id: string }).id === 'turn-1',
    );
    expect(user?.requestId).toEqual(expect.any(String));
    expect(deltaText(turn.frames)).toBe('A scripted answer that spans pieces.');
    const assistant = notifications.find((n) => n?.type === 'create_message' && (n.message as { role: string }).role === 'assistant');
    expect(assistant?.message).toMatchObject({
      content: [{ type: 'text', text: 'A scripted answer that spans pieces.' }],
      modelId: 'custom:Scripted-0',
    });
    expect(notifications.some((n) => n?.type === 'session_token_usage_changed')).toBe(true);
    const ackIndex = turn.frames.findIndex((frame) => frame.type === 'response');
    expect(ackIndex).toBe(0);
  });

  it('rejects frames without type, with numeric ids or another API version with -32700, like droid', async () => {
    const client = await fleet.start(dirs);
    const errors = (): RawFrame[] => client.frames.filter((frame) => frame.type === 'response' && frame.id === null);
    client.writeLine(JSON.stringify({ jsonrpc: '2.0', id: '1', method: 'droid.initialize_session', params: {} }));
    client.writeLine(
      JSON.stringify({ jsonrpc: '2.0', type: 'request', factoryApiVersion: '1.0.0', id: 7, method: 'droid.list_models', params: {} }),
    );
    client.writeLine(
      JSON.stringify({ jsonrpc: '2.0', type: 'request', factoryApiVersion: '2.0.0', id: 'x', method: 'droid.list_models', params: {} }),
    );
    client.writeLine('this is not json');
    await client.waitFor(() => errors().length === 4);
    expect(errors().map((frame) => frame.error)).toEqual([
      { code: -32700, message: 'Invalid JSON-RPC message' },
      { code: -32700, message: 'Invalid JSON-RPC message' },
      { code: -32700, message: 'Invalid JSON-RPC message' },
      { code: -32700, message: 'Invalid JSON' },
    ]);
  });

  it('accepts what droid accepts: no protocol version, _meta, extra fields, an empty string id', async () => {
    const client = await fleet.start(dirs);
    const line = (id: string, extra: object): string =>
      JSON.stringify({
        jsonrpc: '2.0',
        type: 'request',
        factoryApiVersion: '1.0.0',
        id,
        method: 'droid.list_models',
        params: {},
        ...extra,
      });
    client.writeLine(line('a', {}));
    client.writeLine(line('b', { _meta: { traceparent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01' }, foo: 1 }));
    client.writeLine(line('', { factoryProtocolVersion: '0.1.0' }));
    for (const id of ['a', 'b', '']) {
      const response = await client.waitFor((frame) => frame.type === 'response' && frame.id === id);
      expect(response.result).toMatchObject({ models: expect.any(Array) });
    }
  });

  it('answers add_user_message before any session with {} and then a -32603 response with the same id', async () => {
    const client = await fleet.start(dirs);
    await expect(client.request('droid.add_user_message', { text: 'early' })).resolves.toEqual({});
    const second = await client.waitFor((frame) => frame.type === 'response' && frame.error !== undefined);
    expect(second).toMatchObject({ id: 'r1', error: { code: -32603 } });
  });

  it('validates params and methods like droid (-32602, -32601)', async () => {
    const client = await fleet.start(dirs);
    await expect(client.request('droid.initialize_session', { machineId: 'm1' })).rejects.toMatchObject({
      code: -32602,
      message: 'Invalid request for droid.initialize_session: params.cwd: Required',
    });
    await expect(client.request('droid.no_such_method')).rejects.toMatchObject({ code: -32601 });
    await initialize(client, dirs.workspace);
    await expect(client.request('droid.update_session_settings', { reasoningEffort: 'ultra' })).rejects.toMatchObject({ code: -32602 });
  });

  it('interrupts a running turn: {} then agent_turn_completed cancelled', async () => {
    const client = await fleet.start(dirs, { FAKE_DROID_STEP_MS: '200' });
    await initialize(client, dirs.workspace);
    const completed = client.waitFor((frame) => isNotification(frame, 'agent_turn_completed'));
    await client.request('droid.add_user_message', { text: 'long', messageId: 't-int' });
    await client.request('droid.interrupt_session');
    expect(notificationOf(await completed)).toMatchObject({ reason: 'cancelled', turnId: 't-int' });
  });
});

describe('fake droid sessions', () => {
  it('loads a session in a later process from $HOME/.fake-droid, and refuses unknown ids with -32004', async () => {
    const first = await fleet.start(dirs);
    const { sessionId } = (await initialize(first, dirs.workspace)) as { sessionId: string };
    await first.runTurn('first question');
    await first.request('droid.close_session');
    expect((await first.exited).code).toBe(0);
    const stored = JSON.parse(await readFile(join(dirs.home, '.fake-droid', 'sessions', `${sessionId}.json`), 'utf8'));
    expect(stored.sessionId).toBe(sessionId);

    const second = await fleet.start(dirs);
    const loaded = (await second.request('droid.load_session', { sessionId })) as Record<string, unknown>;
    expect(loaded.sessionId).toBeUndefined();
    const texts = (loaded.session as { messages: { content: { text?: string }[] }[] }).messages.flatMap((m) =>
      m.content.map((c) => c.text),
    );
    expect(texts).toEqual(expect.arrayContaining(['first question', 'Hello from the fake droid.']));
    const turn = await second.runTurn('second question');
    expect(turn.completion.reason).toBe('completed');
    const missing = second.request('droid.load_session', { sessionId: 'no-such-session' });
    await expect(missing).rejects.toBeInstanceOf(RawDroidError);
    await expect(missing).rejects.toMatchObject({ code: -32004, message: 'Session not found' });
  });
});
