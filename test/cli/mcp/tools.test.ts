import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ERROR_CODES, OneWorksError } from '../../../core/errors.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { readBounds } from '../../../core/orchestrator/session-detail.js';
import { sessionDetail } from '../../../core/orchestrator/session-queries.js';
import type { SessionRecord } from '../../../core/store/index.js';
import { connectFake } from './connect-fake.js';

type Connected = Awaited<ReturnType<typeof connectFake>>;
let open: Connected | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

async function connect(redact?: (text: string) => string): Promise<Connected> {
  open = await connectFake(redact);
  return open;
}

const NATIVE = '5b531cf0-1bbd-4b7b-9050-d836012c048c';
const CHILD = '9d0c1a2b-3c4d-4e5f-8a9b-0c1d2e3f4a5b';

describe('MCP tools over a fake orchestrator (real SDK client, in memory)', () => {
  it('lists the eighteen tools, each with a closed input schema, a description and an output schema', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        'answer_ask',
        'cancel_session',
        'create_session',
        'list_asks',
        'find_sessions',
        'fork_session',
        'list_workspaces',
        'models',
        'read_session',
        'send_message',
        'session_status',
        'update_session',
        'usage',
        'wait_for_sessions',
        'diff_session',
        'merge_session',
        'discard_session',
        'compare',
      ].sort(),
    );
    for (const tool of tools) {
      expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
      expect(tool.outputSchema).toMatchObject({ type: 'object' });
      expect(tool.description?.length).toBeGreaterThan(20);
    }
  });

  it('create_session passes the request through and returns the handle with its effective settings', async () => {
    const { client, fake } = await connect();
    const result = await client.callTool({
      name: 'create_session',
      arguments: { workspace: '/ws/a', prompt: 'hi', requestKey: 'k1', title: 'T', labels: ['x'], autonomy: 'high' },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      sessionId: 's-0000000001',
      runId: 'r1',
      state: 'running',
      settings: { model: 'm-default', autonomy: 'high' },
    });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('s-0000000001') }]);
    expect(fake.calls).toEqual([
      { method: 'info', args: undefined },
      {
        method: 'createSession',
        args: { workspace: '/ws/a', prompt: 'hi', requestKey: 'k1', title: 'T', labels: ['x'], autonomy: 'high', adapter: 'droid' },
      },
    ]);
  });

  it("create_session, models and compare without an adapter take the orchestrator's default adapter (defaults.adapter)", async () => {
    const { client, fake } = await connect();
    fake.defaultAdapter = 'claude-code';
    const created = await client.callTool({ name: 'create_session', arguments: { workspace: '/ws/a', prompt: 'hi' } });
    expect(created.isError).toBeFalsy();
    expect((await client.callTool({ name: 'models', arguments: {} })).structuredContent).toMatchObject({ adapter: 'claude-code' });
    await client.callTool({ name: 'create_session', arguments: { workspace: '/ws/a', prompt: 'named', adapter: 'droid' } });
    const compared = await client.callTool({
      name: 'compare',
      arguments: { workspace: '/ws/a', prompt: 'c', models: ['m-a', 'm-b'], check: 'true', timeoutSeconds: 0 },
    });
    expect(compared.isError, JSON.stringify(compared.content)).toBeFalsy();
    expect(fake.calls.filter((call) => call.method !== 'info' && call.method !== 'status').map((call) => [call.method, call.args])).toEqual(
      [
        ['createSession', { workspace: '/ws/a', prompt: 'hi', adapter: 'claude-code' }],
        ['models', 'claude-code'],
        ['createSession', { workspace: '/ws/a', prompt: 'named', adapter: 'droid' }],
        ['createSession', expect.objectContaining({ adapter: 'claude-code', model: 'm-a', worktree: {} })],
        ['createSession', expect.objectContaining({ adapter: 'claude-code', model: 'm-b', worktree: {} })],
      ],
    );
  });

  it('refuses unknown arguments and a relative workspace as usage errors without calling the orchestrator', async () => {
    const { client, fake } = await connect();
    for (const args of [{ workspace: '/ws', prompt: 'hi', extra: 1 }, { workspace: 'ws', prompt: 'hi' }, { workspace: '/ws' }]) {
      const result = await client.callTool({ name: 'create_session', arguments: args });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ error: { code: 'usage', retryable: false, action: expect.any(String) } });
    }
    expect(fake.calls).toEqual([]);
  });

  it("send_message maps `session` to the orchestrator's sessionId and keeps interrupt, settings and requestKey", async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-1' });
    const result = await client.callTool({
      name: 'send_message',
      arguments: { session: 's-1', prompt: 'more', interrupt: true, model: 'm2', effort: 'high', requestKey: 'k2' },
    });
    expect(result.structuredContent).toMatchObject({ sessionId: 's-1', runId: 'r2', state: 'queued' });
    expect(fake.calls[0]).toEqual({
      method: 'sendMessage',
      args: { sessionId: 's-1', prompt: 'more', interrupt: true, model: 'm2', effort: 'high', requestKey: 'k2' },
    });
  });

  it('wait_for_sessions: a timeout is a normal result naming the pending sessions; more than 60 s is refused', async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-1', state: 'working' });
    fake.add({ sessionId: 's-2', state: 'needs_attention', attention: ['question unanswered'] });
    const result = await client.callTool({ name: 'wait_for_sessions', arguments: { sessions: ['s-1', 's-2'], timeoutSeconds: 1.5 } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({
      timedOut: true,
      pending: [{ sessionId: 's-1' }],
      settled: [{ sessionId: 's-2', state: 'needs_attention' }],
    });
    expect(fake.calls[0]).toEqual({ method: 'wait', args: { sessionIds: ['s-1', 's-2'], timeoutMs: 1500 } });
    const tooLong = await client.callTool({ name: 'wait_for_sessions', arguments: { sessions: ['s-1'], timeoutSeconds: 61 } });
    expect(tooLong.structuredContent).toMatchObject({ error: { code: 'usage' } });
  });

  it('find_sessions filters by title substring, label, workspace subtree, state and archive flag', async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-a', title: 'Fix the Parser', labels: ['bug'], workspace: '/ws/app', updatedAt: '2026-01-02T00:00:00Z' });
    fake.add({ sessionId: 's-b', title: 'parser docs', workspace: '/ws/app/docs', state: 'working', updatedAt: '2026-01-03T00:00:00Z' });
    fake.add({ sessionId: 's-c', title: 'parser old', labels: ['bug'], workspace: '/ws/application', archived: true });
    const find = async (args: Record<string, unknown>): Promise<string[]> =>
      (
        (await client.callTool({ name: 'find_sessions', arguments: args })).structuredContent as { sessions: { sessionId: string }[] }
      ).sessions.map((s) => s.sessionId);
    expect(await find({ title: 'PARSER' })).toEqual(['s-b', 's-a']);
    expect(await find({ title: 'parser', includeArchived: true })).toEqual(['s-b', 's-a', 's-c']);
    expect(await find({ label: 'bug', includeArchived: true })).toEqual(['s-a', 's-c']);
    expect(await find({ workspace: '/ws/app', includeArchived: true })).toEqual(['s-b', 's-a']);
    expect(await find({ state: 'working' })).toEqual(['s-b']);
    expect(await find({ limit: 1 })).toEqual(['s-b']);
  });

  it('find_sessions still lists the readable sessions beside a corrupt one, which it reports apart with its reason (no file path)', async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-good' });
    fake.corrupt.push({ sessionId: 's-bad', file: '/state/sessions/s-bad/session.json', reason: 'not valid JSON: truncated' });
    const result = await client.callTool({ name: 'find_sessions', arguments: {} });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({
      sessions: [expect.objectContaining({ sessionId: 's-good' })],
      more: false,
      corrupt: [{ sessionId: 's-bad', reason: 'not valid JSON: truncated' }],
    });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('s-bad: corrupt record (not valid JSON: truncated)') }]);
  });

  it("find_sessions matches a workspace given through a symlink against the sessions' canonical paths", async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'mcp-find-')));
    try {
      await mkdir(join(root, 'real', 'app', 'sub'), { recursive: true });
      await symlink(join(root, 'real'), join(root, 'link'));
      const { client, fake } = await connect();
      fake.add({ sessionId: 's-in', workspace: join(root, 'real', 'app', 'sub') });
      fake.add({ sessionId: 's-out', workspace: join(root, 'real', 'application') });
      const result = await client.callTool({ name: 'find_sessions', arguments: { workspace: join(root, 'link', 'app') } });
      expect((result.structuredContent as { sessions: { sessionId: string }[] }).sessions.map((s) => s.sessionId)).toEqual(['s-in']);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it("refuses a title, label or label count over the orchestrator's limits before calling it", async () => {
    const { client, fake } = await connect();
    for (const extra of [
      { title: 't'.repeat(201) },
      { labels: ['has space'] },
      { labels: ['l'.repeat(65)] },
      { labels: Array.from({ length: 33 }, (_, i) => `l${i}`) },
    ]) {
      const result = await client.callTool({ name: 'create_session', arguments: { workspace: '/ws', prompt: 'hi', ...extra } });
      expect(result.structuredContent, JSON.stringify(extra)).toMatchObject({ error: { code: 'usage' } });
    }
    expect(fake.calls).toEqual([]);
  });

  it('update_session needs at least one change and passes title, labels and archived through', async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-1' });
    expect((await client.callTool({ name: 'update_session', arguments: { session: 's-1' } })).structuredContent).toMatchObject({
      error: { code: 'usage' },
    });
    const result = await client.callTool({
      name: 'update_session',
      arguments: { session: 's-1', title: 'New', labels: ['a', 'b'], archived: true },
    });
    expect(result.structuredContent).toMatchObject({ sessionId: 's-1', title: 'New', labels: ['a', 'b'], archived: true });
    expect(fake.calls.at(-1)).toEqual({
      method: 'updateSession',
      args: { sessionId: 's-1', title: 'New', labels: ['a', 'b'], archived: true },
    });
  });

  it("list_workspaces, models, session_status, cancel_session and usage return the orchestrator's facts", async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-1', state: 'working', latestRun: { runId: 'r1', status: 'running' } });
    expect((await client.callTool({ name: 'list_workspaces', arguments: {} })).structuredContent).toMatchObject({
      approvedRoots: ['/ws'],
      capacity: { limits: { maxConcurrentRuns: 2 }, activity: { live: 1, queued: 0 } },
      adapters: [{ name: 'droid', model: 'm-default', autonomy: 'low' }],
    });
    expect((await client.callTool({ name: 'models', arguments: {} })).structuredContent).toMatchObject({
      adapter: 'droid',
      models: [{ id: 'm-default', efforts: ['low', 'high'] }],
    });
    expect((await client.callTool({ name: 'session_status', arguments: { session: 's-1' } })).structuredContent).toMatchObject({
      sessionId: 's-1',
      state: 'working',
    });
    expect((await client.callTool({ name: 'cancel_session', arguments: { session: 's-1' } })).structuredContent).toMatchObject({
      state: 'idle',
      latestRun: { status: 'interrupted' },
    });
    expect((await client.callTool({ name: 'usage', arguments: { sessions: ['s-1'] } })).structuredContent).toMatchObject({
      total: { reported: true, inputTokens: 10 },
    });
    expect(fake.calls.map((c) => c.method)).toEqual(['info', 'info', 'models', 'status', 'cancel', 'usage']);
  });

  it('strips fields the tools do not document (a native id added to a summary never leaves)', async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-1', ...({ nativeSessionId: NATIVE } as object) });
    const result = await client.callTool({ name: 'session_status', arguments: { session: 's-1' } });
    expect(JSON.stringify(result)).not.toContain(NATIVE);
    expect(result.structuredContent).toMatchObject({ sessionId: 's-1' });
  });

  it('read_session removes native ids from events: keys, child ids, native payload fields, and every echo of them', async () => {
    const { client, fake } = await connect();
    fake.add({ sessionId: 's-1' });
    const at = '2026-01-01T00:00:00Z';
    fake.events = [
      {
        type: 'session.started',
        key: `started:${NATIVE}`,
        sessionId: 's-1',
        seq: 1,
        at,
        adapter: 'droid',
        workspace: '/ws',
        resumed: false,
      },
      {
        type: 'native',
        key: 'n1',
        sessionId: 's-1',
        seq: 2,
        at,
        nativeType: 'session_info',
        payload: { sessionId: NATIVE, nested: { native_session_id: NATIVE, keep: 'yes' } },
      },
      { type: 'child_session', key: `child:${CHILD}`, sessionId: 's-1', seq: 3, at, childSessionId: CHILD, description: 'sub' },
      { type: 'error', key: 'e1', sessionId: 's-1', seq: 4, at, code: 'x', message: `could not load ${NATIVE}` },
      { type: 'assistant.message', key: 'm1', sessionId: 's-1', seq: 5, at, messageId: 'm1', text: `the child was ${CHILD}` },
    ] as RuntimeEvent[];
    const result = await client.callTool({ name: 'read_session', arguments: { session: 's-1', maxEvents: 10 } });
    const text = JSON.stringify(result);
    expect(text).not.toContain(NATIVE);
    expect(text).not.toContain(CHILD);
    const events = (result.structuredContent as { events: Record<string, unknown>[] }).events;
    expect(events.map((e) => e.type)).toEqual(['session.started', 'native', 'child_session', 'error', 'assistant.message']);
    expect(events.every((e) => !('key' in e))).toBe(true);
    expect(events[1]).toMatchObject({ payload: { nested: { keep: 'yes' } } });
    expect(events[4]).toMatchObject({ text: 'the child was [native-id]' });
    expect(fake.calls[0]).toEqual({ method: 'readSession', args: { sessionId: 's-1', maxEvents: 10 } });
  });

  it("read_session over the orchestrator's own detail: no native id in structured or text content, even outside the event window and in the run text", async () => {
    const { client, fake } = await connect();
    const summary = fake.add({ sessionId: 's-1' });
    const at = '2026-01-01T00:00:00Z';
    const log = [
      { type: 'child_session', key: 'c1', sessionId: 's-1', seq: 1, at, childSessionId: CHILD },
      ...Array.from({ length: 10 }, (_, i) => ({
        type: 'log',
        key: `l${i}`,
        sessionId: 's-1',
        seq: i + 2,
        at,
        level: 'info',
        message: `line ${i}`,
      })),
      { type: 'tool.result', key: 't1', sessionId: 's-1', seq: 20, at, toolUseId: 't1', isError: false, output: `spawned ${CHILD}` },
    ] as RuntimeEvent[];
    const record: SessionRecord = {
      id: 's-1',
      adapter: 'droid',
      workspace: '/ws',
      createdAt: at,
      updatedAt: at,
      status: 'idle',
      nativeSessionId: NATIVE,
      runs: [{ id: 'r1', prompt: 'go', autonomy: 'low', status: 'completed', text: `session ${NATIVE} spawned ${CHILD}` }],
    };
    fake.detail = (request) => sessionDetail(record, summary, log, readBounds(request));
    const result = await client.callTool({ name: 'read_session', arguments: { session: 's-1', maxEvents: 2 } });
    expect(result.isError).toBeFalsy();
    const everything = JSON.stringify([result.structuredContent, result.content]);
    expect(everything).not.toContain(NATIVE);
    expect(everything).not.toContain(CHILD);
    expect(result.structuredContent).toMatchObject({
      latestRun: { text: 'session [native-id] spawned [native-id]' },
      events: [{ type: 'log' }, { type: 'tool.result', output: 'spawned [native-id]' }],
    });
  });

  it('read_session masks an echoed native id in its text content as well', async () => {
    const { client, fake } = await connect();
    const summary = fake.add({ sessionId: 's-1' });
    const at = '2026-01-01T00:00:00Z';
    fake.detail = () => ({
      summary,
      latestRun: { runId: 'r1', status: 'completed', prompt: 'go', settings: { autonomy: 'low' }, text: `child ${CHILD} done` },
      events: [{ type: 'child_session', key: 'c', sessionId: 's-1', seq: 1, at, childSessionId: CHILD }] as RuntimeEvent[],
      eventsTruncated: false,
      pendingQuestions: [`answer for ${CHILD}?`],
    });
    const result = await client.callTool({ name: 'read_session', arguments: { session: 's-1' } });
    const text = (result.content as { text: string }[]).map((c) => c.text).join('\n');
    expect(text).toContain('child [native-id] done');
    expect(text).toContain('answer for [native-id]?');
    expect(JSON.stringify(result)).not.toContain(CHILD);
  });

  it("read_session's text content is a short summary: a preview of the run text, never all of it again", async () => {
    const { client, fake } = await connect();
    const summary = fake.add({ sessionId: 's-1' });
    const long = 'w'.repeat(20_000);
    fake.detail = () => ({
      summary,
      latestRun: { runId: 'r1', status: 'completed', prompt: 'go', settings: { autonomy: 'low' }, text: long },
      events: [],
      eventsTruncated: true,
      pendingQuestions: [],
    });
    const result = await client.callTool({ name: 'read_session', arguments: { session: 's-1' } });
    expect((result.structuredContent as { latestRun: { text: string } }).latestRun.text).toBe(long);
    const text = (result.content as { text: string }[])[0]!.text;
    expect(text.length).toBeLessThan(1000);
    expect(text).toContain('latest run r1 completed: www');
    expect(text).toContain(`[${20_000 - 300} chars cut]`);
    expect(text).toContain('0 recent event(s), older ones left out');
  });

  it('maps orchestrator refusals to structured errors with their stable code, retryable flag and action', async () => {
    const { client, fake } = await connect();
    const cases = [
      [new OneWorksError(ERROR_CODES.QUEUE_FULL, 'the queue is full (10)'), 'queue_full', true],
      [new OneWorksError(ERROR_CODES.WORKSPACE_NOT_APPROVED, '/etc is not inside an approved root'), 'workspace_not_approved', false],
      [new OneWorksError(ERROR_CODES.REQUEST_KEY_CONFLICT, 'request key k1 was used with other arguments'), 'request_key_conflict', false],
      [new OneWorksError(ERROR_CODES.MODEL_UNAVAILABLE, 'model x is not in the catalog'), 'model_unavailable', false],
      [new OneWorksError(ERROR_CODES.EFFORT_REQUIRED, 'name an effort'), 'effort_required', false],
    ] as const;
    for (const [error, code, retryable] of cases) {
      fake.fail('createSession', error);
      const result = await client.callTool({ name: 'create_session', arguments: { workspace: '/ws', prompt: 'hi' } });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toEqual({
        error: { code, message: error.message, retryable, action: expect.stringMatching(/\w+.*\./) },
      });
    }
    fake.fail('status', new OneWorksError(ERROR_CODES.SESSION_UNKNOWN_OUTCOME, "the last turn's outcome is unknown"));
    expect((await client.callTool({ name: 'session_status', arguments: { session: 's-x' } })).structuredContent).toMatchObject({
      error: { code: 'session_unknown_outcome' },
    });
  });

  it('turns unexpected failures into a generic internal error and logs the details locally, redacted', async () => {
    const { client, fake, logs } = await connect((text) => text.replaceAll('sk-secret-123', '[REDACTED]'));
    fake.fail('list', new TypeError('boom with sk-secret-123'));
    const result = await client.callTool({ name: 'find_sessions', arguments: {} });
    expect(result.structuredContent).toMatchObject({ error: { code: 'internal', retryable: false } });
    expect(JSON.stringify(result)).not.toContain('boom');
    expect(logs.join('\n')).toContain('boom with [REDACTED]');
    expect(logs.join('\n')).not.toContain('sk-secret-123');
    fake.fail('status', new OneWorksError(ERROR_CODES.USAGE, 'bad token sk-secret-123 here'));
    const redacted = await client.callTool({ name: 'session_status', arguments: { session: 's-1' } });
    expect(redacted.structuredContent).toMatchObject({ error: { code: 'usage', message: 'bad token [REDACTED] here' } });
  });
});
