import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { startOrchestratorServer, type OrchestratorServer } from '../../cli/daemon/server.js';
import { socketPath } from '../../cli/daemon/wire.js';
import type { CatalogModel } from '../../core/catalog/index.js';
import { useOrchestratorHarnesses, type OrchestratorHarness } from '../core/orchestrator/orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();
const opened: Array<OrchestratorClient | OrchestratorServer> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

const CATALOG: CatalogModel[] = [
  { id: 'big', displayName: 'Big', custom: false, deprecated: false, disabled: false, efforts: ['low', 'high'], defaultEffort: 'high' },
  { id: 'custom:byok', displayName: 'BYOK', custom: true, deprecated: false, disabled: false, efforts: ['none'] },
];

async function connected(h: OrchestratorHarness): Promise<OrchestratorClient> {
  const server = await startOrchestratorServer({
    orchestrator: h.orchestrator,
    socketPath: socketPath(h.deps.stateDir),
    redact: (text) => text,
  });
  opened.push(server);
  const client = await tryConnect(server.socketPath);
  if (!client) throw new Error('the server did not accept a connection');
  opened.push(client);
  return client;
}

describe('orchestrator control socket: metadata, reads, usage, info, models', () => {
  it('forwards every new method and returns handles with their settings', async () => {
    const h = await harnesses({
      fake: {},
      deps: { adapterNames: () => ['fake'], defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: async () => CATALOG },
    });
    const client = await connected(h);
    const handle = await client.createSession({
      adapter: 'fake',
      workspace: h.root,
      prompt: 'hello',
      title: 'T',
      labels: ['a'],
      autonomy: 'off',
    });
    expect(handle.settings).toEqual({ model: 'big', autonomy: 'off' });
    const next = await client.sendMessage({ sessionId: handle.sessionId, prompt: 'again', model: 'custom:byok' });
    expect(next.settings).toEqual({ model: 'custom:byok', autonomy: 'off' });
    await client.wait([handle.sessionId], 30_000);

    expect(await client.updateSession({ sessionId: handle.sessionId, archived: true, labels: ['b'] })).toMatchObject({
      title: 'T',
      labels: ['b'],
      archived: true,
    });
    const detail = await client.readSession({ sessionId: handle.sessionId, maxEvents: 3 });
    expect(detail.events).toHaveLength(3);
    expect(detail.eventsTruncated).toBe(true);
    expect(detail.latestRun).toMatchObject({ runId: 'r2', settings: { model: 'custom:byok', autonomy: 'off' } });
    const usage = await client.usage([handle.sessionId]);
    expect(usage.sessions).toEqual([expect.objectContaining({ sessionId: handle.sessionId, runs: 2 })]);
    expect((await client.usage()).total).toEqual(usage.total);
    expect(await client.info()).toMatchObject({ approvedRoots: [h.root], adapters: [{ name: 'fake', model: 'big', autonomy: 'low' }] });
    expect(await client.models('fake')).toEqual(CATALOG);
  });

  it('checks the new params at the edge and passes stable error codes through', async () => {
    const h = await harnesses({ fake: {}, deps: { modelsFor: async () => CATALOG } });
    const client = await connected(h);
    const handle = await client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    await client.waitForRun(handle.sessionId, handle.runId);
    await expect(client.readSession({ sessionId: handle.sessionId, maxEvents: 201 })).rejects.toMatchObject({
      code: 'peer_error',
      message: expect.stringMatching(/invalid params/),
    });
    await expect(client.updateSession({ sessionId: handle.sessionId, title: 'x'.repeat(201) })).rejects.toMatchObject({
      code: 'peer_error',
    });
    await expect(client.updateSession({ sessionId: handle.sessionId, labels: ['no spaces'] })).rejects.toMatchObject({
      code: 'usage',
      message: expect.stringContaining('invalid label'),
    });
    await expect(client.sendMessage({ sessionId: handle.sessionId, prompt: 'x', model: 'missing' })).rejects.toMatchObject({
      code: 'model_unavailable',
    });
    await expect(client.readSession({ sessionId: 's-missing' })).rejects.toMatchObject({ code: 'session_not_found' });
  });
});
