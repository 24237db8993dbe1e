import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isNotification, notificationOf, turnCompletedFor } from '../support/raw-droid-client.js';
import type { RawDroidClient } from '../support/raw-droid-client.js';
import { expectGone, FakeDroidFleet, initialize, makeDirs } from './fake-droid-harness.js';
import type { FakeDroidDirs } from './fake-droid-harness.js';

const fleet = new FakeDroidFleet();
let dirs: FakeDroidDirs;

beforeEach(async () => {
  dirs = await makeDirs();
});

afterEach(async () => {
  await fleet.closeAll();
  await dirs.dispose();
});

async function startWith(fault: string, env: Record<string, string> = {}): Promise<RawDroidClient> {
  const client = await fleet.start(dirs, { FAKE_DROID_FAULT: fault, ...env });
  await initialize(client, dirs.workspace);
  return client;
}

describe('fake droid version faults', () => {
  it('wrong-protocol announces another protocol version on every frame', async () => {
    const client = await startWith('wrong-protocol');
    expect(new Set(client.frames.map((frame) => frame.factoryProtocolVersion))).toEqual(new Set(['0.0.1']));
  });

  it('wrong-api announces another factoryApiVersion', async () => {
    const client = await startWith('wrong-api');
    expect(new Set(client.frames.map((frame) => frame.factoryApiVersion))).toEqual(new Set(['2.0.0']));
  });

  it('missing-version leaves factoryProtocolVersion out', async () => {
    const client = await startWith('missing-version');
    expect(client.frames.length).toBeGreaterThan(0);
    expect(client.frames.some((frame) => 'factoryProtocolVersion' in frame)).toBe(false);
  });

  it('malformed-init answers initialize_session without sessionId, settings or availableModels', async () => {
    const client = await fleet.start(dirs, { FAKE_DROID_FAULT: 'malformed-init' });
    const result = (await initialize(client, dirs.workspace)) as Record<string, unknown>;
    expect(result.sessionId).toBeUndefined();
    expect(result.settings).toBeUndefined();
    expect(result.availableModels).toBeUndefined();
  });
});

describe('fake droid turn faults', () => {
  it('malformed-frame writes one non-JSON line mid-turn, then completes the turn', async () => {
    const client = await startWith('malformed-frame');
    const turn = await client.runTurn('go');
    expect(turn.completion.reason).toBe('completed');
    expect(client.invalidLines).toHaveLength(1);
  });

  it('oversized-frame writes a 20 MiB line mid-turn, then completes the turn', async () => {
    const client = await startWith('oversized-frame');
    const turn = await client.runTurn('go');
    expect(turn.completion.reason).toBe('completed');
    const padding = turn.frames.map(notificationOf).find((n) => n?.type === 'fake_padding');
    expect(String(padding?.padding).length).toBe(20 * 1024 * 1024);
  });

  it('die-mid-turn exits 1 after a tool_call, without agent_turn_completed', async () => {
    const client = await startWith('die-mid-turn');
    const turn = client.runTurn('go');
    await expect(turn).rejects.toThrow(/droid exited \(code 1/);
    expect((await client.exited).code).toBe(1);
    expect(client.frames.filter((frame) => isNotification(frame, 'tool_call'))).toHaveLength(2);
    expect(client.frames.some((frame) => isNotification(frame, 'agent_turn_completed'))).toBe(false);
    expect(client.stderr).toContain('dying mid-turn');
  });

  it('silence acknowledges add_user_message and then never writes again', async () => {
    const client = await startWith('silence');
    const before = client.frames.length;
    await expect(client.request('droid.add_user_message', { text: 'go' })).resolves.toEqual({});
    await expect(client.request('droid.interrupt_session', {}, { timeoutMs: 300 })).rejects.toThrow(/no response/);
    expect(client.frames.length).toBe(before + 1);
  });

  it('stdout-closed-before-exit ends stdout mid-turn while the process lives on, then exits 0', async () => {
    const client = await startWith('stdout-closed-before-exit', { FAKE_DROID_LINGER_MS: '1500' });
    void client.request('droid.add_user_message', { text: 'go' }).catch(() => undefined);
    await client.stdoutEnded;
    expect(() => process.kill(client.pid, 0)).not.toThrow();
    expect((await client.exited).code).toBe(0);
    expect(client.frames.some((frame) => isNotification(frame, 'agent_turn_completed'))).toBe(false);
  });

  it('idle-before-message reports idle before the assistant message, then completes normally', async () => {
    const client = await startWith('idle-before-message');
    const turn = await client.runTurn('go');
    expect(turn.completion.reason).toBe('completed');
    const idle = turn.frames.findIndex((frame) => notificationOf(frame)?.newState === 'idle');
    const assistant = turn.frames.findIndex(
      (frame) => (notificationOf(frame)?.message as { role?: string } | undefined)?.role === 'assistant',
    );
    expect(idle).toBeGreaterThan(-1);
    expect(idle).toBeLessThan(assistant);
    expect(turn.frames.slice(assistant).some((frame) => isNotification(frame, 'session_token_usage_changed'))).toBe(true);
  });

  it('unrelated-turn-id completes another turn id and never the submitted one', async () => {
    const client = await startWith('unrelated-turn-id');
    const other = client.waitFor((frame) => isNotification(frame, 'agent_turn_completed'));
    await client.request('droid.add_user_message', { text: 'go', messageId: 'mine' });
    expect(String(notificationOf(await other)?.turnId)).not.toBe('mine');
    await expect(client.waitFor(turnCompletedFor('mine'), { timeoutMs: 300 })).rejects.toThrow(/no matching frame/);
  });

  it('double-response sends every response twice with the same id', async () => {
    const client = await startWith('double-response');
    await client.request('droid.list_models');
    await client.waitFor((frame) => frame.id === 'r2' && client.frames.filter((f) => f.id === 'r2').length === 2);
    expect(client.frames.filter((frame) => frame.id === 'r2')).toHaveLength(2);
  });

  it('ignore-sigterm survives SIGTERM and stdin EOF; SIGKILL ends it', async () => {
    const client = await startWith('ignore-sigterm');
    await client.close({ graceMs: 300 });
    expect((await client.exited).signal).toBe('SIGKILL');
    expectGone(client.pid);
  });
});
