import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { startOrchestratorServer, type OrchestratorServer } from '../../cli/daemon/server.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { useOrchestratorHarnesses, type OrchestratorHarness } from '../core/orchestrator/orchestrator-harness.js';

// The control socket's `intent` and `intent.drop` on the in-memory fake adapter: an intent's
// agent belongs to its connection; the createSession sent right behind it takes it, the
// connection's end or `intent.drop` discards it.

const harnesses = useOrchestratorHarnesses();
const opened: Array<OrchestratorClient | OrchestratorServer> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

async function setUp(): Promise<{ h: OrchestratorHarness; client: OrchestratorClient; logged: string[] }> {
  const logged: string[] = [];
  const h = await harnesses({ fake: {}, deps: { defaultAdapter: 'fake', log: (message) => logged.push(message) } });
  const server = await startOrchestratorServer({ orchestrator: h.orchestrator, socketPath: socketPath(h.deps.stateDir), redact: (t) => t });
  opened.push(server);
  const client = await tryConnect(server.socketPath);
  if (!client) throw new Error('the server did not accept a connection');
  opened.push(client);
  return { h, client, logged };
}

describe('control socket: intent', () => {
  it('a createSession sent right behind its intent (not awaited) takes the intent agent: one agent', async () => {
    const { h, client, logged } = await setUp();
    const told = client.intent!({ workspace: h.root });
    const handle = await client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    expect((await told).intentId).toBe(handle.sessionId);
    expect(await client.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(h.fake!.log.opened.map((spec) => spec.sessionId)).toEqual([handle.sessionId]);
    expect(logged).toContain(`intent: session ${handle.sessionId} takes the agent started for its intent`);
  });

  it('closing a connection whose intent no createSession took discards its agent before the close resolves', async () => {
    const { h, client } = await setUp();
    const { intentId } = await client.intent!({ workspace: h.root });
    await h.until(() => h.fake!.log.opened.length === 1);
    expect(existsSync(join(h.deps.stateDir, 'sessions', intentId!))).toBe(true);
    await client.close();
    expect(h.fake!.log.closed).toEqual([intentId]);
    expect(existsSync(join(h.deps.stateDir, 'sessions', intentId!))).toBe(false);
    expect(await h.orchestrator.list()).toEqual([]);
  });

  it('another connection cannot take an intent: its createSession gets an agent of its own', async () => {
    const { h, client } = await setUp();
    const { intentId } = await client.intent!({ workspace: h.root });
    const other = await tryConnect(socketPath(h.deps.stateDir));
    opened.push(other!);
    const handle = await other!.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    expect(handle.sessionId).not.toBe(intentId);
    expect(await other!.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(h.fake!.log.closed).not.toContain(intentId);
    await client.close();
    expect(h.fake!.log.closed).toContain(intentId);
  });
});
