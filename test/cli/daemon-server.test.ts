import { stat, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { startOrchestratorServer, type OrchestratorServer } from '../../cli/daemon/server.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { useOrchestratorHarnesses, type OrchestratorHarness } from '../core/orchestrator/orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();
const opened: Array<OrchestratorClient | OrchestratorServer> = [];
afterEach(async () => {
  // Clients first, then servers; the harness (registered earlier) shuts the orchestrator down after.
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function serve(h: OrchestratorHarness, options: { idleExitMs?: number; onIdle?: () => void } = {}): Promise<OrchestratorServer> {
  const server = await startOrchestratorServer({
    orchestrator: h.orchestrator,
    socketPath: socketPath(h.deps.stateDir),
    redact: (text) => text.replaceAll('sk-wire-secret', '[REDACTED]'),
    ...options,
  });
  opened.push(server);
  return server;
}

async function connect(server: OrchestratorServer): Promise<OrchestratorClient> {
  const client = await tryConnect(server.socketPath);
  if (!client) throw new Error('the server did not accept a connection');
  opened.push(client);
  return client;
}

describe('orchestrator control socket', () => {
  it('creates the socket with mode 0600, replacing a stale socket file, and removes it on close', async () => {
    const h = await harnesses({ fake: {} });
    await writeFile(socketPath(h.deps.stateDir), 'stale');
    const server = await serve(h);
    const info = await stat(server.socketPath);
    expect(info.isSocket()).toBe(true);
    expect(info.mode & 0o777).toBe(0o600);
    await server.close();
    await expect(stat(server.socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await tryConnect(server.socketPath)).toBeUndefined();
  });

  it('runs a turn through the socket and streams its events to a subscriber', async () => {
    const h = await harnesses({ fake: {} });
    const client = await connect(await serve(h));
    const handle = await client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello', labels: ['l'] });
    expect(handle).toMatchObject({ runId: 'r1' });
    const events: RuntimeEvent[] = [];
    await client.subscribe(handle.sessionId, (event) => events.push(event));
    const outcome = await client.waitForRun(handle.sessionId, handle.runId);
    expect(outcome).toMatchObject({ status: 'completed', runStatus: 'completed', text: 'reply to hello' });
    const waited = await client.wait([handle.sessionId], 1_000);
    expect(waited.timedOut).toBe(false);
    expect(waited.settled.map((s) => s.sessionId)).toEqual([handle.sessionId]);
    expect(await client.status(handle.sessionId)).toMatchObject({ state: 'idle', latestRun: { runId: 'r1', status: 'completed' } });
    expect((await client.list()).map((s) => s.sessionId)).toContain(handle.sessionId);
    await h.until(() => events.some((e) => e.type === 'turn.completed'));
    expect(events.every((e) => e.sessionId === handle.sessionId)).toBe(true);
    const record = await h.session.store.readSession(handle.sessionId);
    expect(record.runs.map((r) => r.status)).toEqual(['completed']);
  });

  it('sends errors with their OneWorksError code and a redacted message', async () => {
    const h = await harnesses({ fake: {} });
    const client = await connect(await serve(h));
    await expect(client.status('s-missing')).rejects.toMatchObject({ name: 'OneWorksError', code: 'session_not_found' });
    await expect(client.createSession({ adapter: 'fake', workspace: '/', prompt: 'x' })).rejects.toMatchObject({
      code: 'workspace_not_approved',
    });
    // The harness's defaultsFor throws a plain Error naming the adapter: it becomes `internal`, redacted.
    const unknown = client.createSession({ adapter: 'sk-wire-secret', workspace: h.root, prompt: 'x' });
    await expect(unknown).rejects.toMatchObject({ code: 'internal' });
    await expect(unknown).rejects.toThrow(/\[REDACTED\]/);
    await expect(unknown).rejects.not.toThrow(/sk-wire-secret/);
    // Params are checked at the edge: the orchestrator never sees them.
    await expect(client.wait([], 10)).rejects.toMatchObject({ code: 'peer_error', message: expect.stringMatching(/invalid params/) });
    await expect(client.createSession({ adapter: 'fake', workspace: h.root, prompt: '', autonomy: 'wild' as never })).rejects.toMatchObject(
      {
        code: 'peer_error',
      },
    );
    expect(await h.session.store.listSessions()).toEqual([]);
  });

  it('waits with a timeout that is not a failure, then cancels the live turn', async () => {
    const h = await harnesses({ fake: { script: () => ({ hang: true }) } });
    const client = await connect(await serve(h));
    const handle = await client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'long' });
    await h.running(handle.sessionId, handle.runId);
    const waited = await client.wait([handle.sessionId], 50);
    expect(waited).toMatchObject({ timedOut: true, settled: [] });
    expect(waited.pending.map((s) => [s.sessionId, s.state])).toEqual([[handle.sessionId, 'working']]);
    const summary = await client.cancel(handle.sessionId);
    expect(summary).toMatchObject({ state: 'idle', latestRun: { runId: 'r1', status: 'interrupted' } });
    expect(await client.waitForRun(handle.sessionId, 'r1')).toMatchObject({
      runStatus: 'interrupted',
      reason: expect.stringMatching(/^cancelled/),
    });
    expect(h.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
  });

  it('reports idle only once no client is connected and no turn is live or queued', async () => {
    const h = await harnesses({ fake: {} });
    let idle = 0;
    const server = await serve(h, { idleExitMs: 30, onIdle: () => (idle += 1) });
    const client = await connect(server);
    const handle = await client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    await client.waitForRun(handle.sessionId, handle.runId);
    // Connected clients keep the server up however long they stay.
    await sleep(300);
    expect(idle).toBe(0);
    expect(server.clients()).toBe(1);
    await client.close();
    await h.until(() => idle === 1);
    expect(server.clients()).toBe(0);
    expect(h.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
  });
});
