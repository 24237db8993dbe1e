import { afterEach, describe, expect, it } from 'vitest';
import { connectFake } from './connect-fake.js';

// The worktree tools' argument handling over a fake orchestrator; what they do with real git and
// the real droid is proven in test/conformance/worktree-sessions.test.ts, worktree-mcp.test.ts
// and compare-models.test.ts.

type Connected = Awaited<ReturnType<typeof connectFake>>;
let open: Connected | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

describe('MCP worktree tools', () => {
  it('create_session with worktree: true asks for a worktree at base; base alone is refused', async () => {
    open = await connectFake();
    const { client, fake } = open;
    const made = await client.callTool({
      name: 'create_session',
      arguments: { workspace: '/ws/a', prompt: 'hi', worktree: true, base: 'dev' },
    });
    expect(made.isError).toBeFalsy();
    expect(fake.calls.filter((call) => call.method !== 'info')[0]).toEqual({
      method: 'createSession',
      args: { workspace: '/ws/a', prompt: 'hi', adapter: 'droid', worktree: { base: 'dev' } },
    });
    const refused = await client.callTool({ name: 'create_session', arguments: { workspace: '/ws/a', prompt: 'hi', base: 'dev' } });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.structuredContent)).toContain('usage');
    expect(fake.calls.filter((call) => call.method !== 'info')).toHaveLength(1);
  });

  it('create_session passes worktree: false on, and leaves worktree out when it is not given (the root decides)', async () => {
    open = await connectFake();
    const { client, fake } = open;
    await client.callTool({ name: 'create_session', arguments: { workspace: '/ws/a', prompt: 'hi', worktree: false } });
    await client.callTool({ name: 'create_session', arguments: { workspace: '/ws/a', prompt: 'hi' } });
    expect(fake.calls.filter((call) => call.method !== 'info').map((call) => call.args)).toEqual([
      { workspace: '/ws/a', prompt: 'hi', adapter: 'droid', worktree: false },
      { workspace: '/ws/a', prompt: 'hi', adapter: 'droid' },
    ]);
  });

  it('diff_session, merge_session and discard_session pass the session and options through', async () => {
    open = await connectFake();
    const { client, fake } = open;
    fake.add({ sessionId: 's-1' });
    await client.callTool({ name: 'diff_session', arguments: { session: 's-1', stat: true } });
    await client.callTool({ name: 'merge_session', arguments: { session: 's-1', squash: true, into: 'dev' } });
    await client.callTool({ name: 'discard_session', arguments: { session: 's-1' } });
    expect(fake.calls.map((call) => [call.method, call.args])).toEqual([
      ['diffSession', { sessionId: 's-1', stat: true }],
      ['mergeSession', { sessionId: 's-1', squash: true, into: 'dev' }],
      ['discardSession', { sessionId: 's-1' }],
      ['status', 's-1'],
    ]);
  });

  it('compare starts one worktree session per model and does not check turns that are not over when it returns', async () => {
    open = await connectFake();
    const { client, fake } = open;
    const result = await client.callTool({
      name: 'compare',
      arguments: { workspace: '/ws/a', prompt: 'do it', models: ['m-a', 'm-b'], check: 'true', timeoutSeconds: 0 },
    });
    expect(result.isError).toBeFalsy();
    const creates = fake.calls.filter((call) => call.method === 'createSession').map((call) => call.args);
    expect(creates).toEqual([
      expect.objectContaining({ adapter: 'droid', model: 'm-a', worktree: {}, labels: ['compare'] }),
      expect.objectContaining({ adapter: 'droid', model: 'm-b', worktree: {}, labels: ['compare'] }),
    ]);
    const rows = (result.structuredContent as { rows: Array<{ model: string; outcome: string }> }).rows;
    expect(rows.map((row) => [row.model, row.outcome])).toEqual([
      ['m-a', 'running'],
      ['m-b', 'running'],
    ]);
    expect(fake.calls.some((call) => call.method === 'checkSession')).toBe(false);
  });
});
