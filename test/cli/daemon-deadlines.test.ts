import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { startOrchestratorServer, type OrchestratorServer } from '../../cli/daemon/server.js';
import { socketPath } from '../../cli/daemon/wire.js';
import type { CatalogModel } from '../../core/catalog/index.js';
import type { Orchestrator } from '../../core/orchestrator/index.js';
import { useOrchestratorHarnesses } from '../core/orchestrator/orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();
const opened: Array<OrchestratorClient | OrchestratorServer> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

const CATALOG: CatalogModel[] = [
  { id: 'big', displayName: 'Big', custom: false, deprecated: false, disabled: false, efforts: ['low', 'high'], defaultEffort: 'high' },
];
// Longer than the client's default deadline below: each of these calls takes at least this long.
const SLOW_MS = 600;
const CLIENT_DEFAULT_MS = 150;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The orchestrator as served, with `cancel` slowed down as a long cancelGraceMs would.
function slowCancel(orchestrator: Orchestrator): Orchestrator {
  return new Proxy(orchestrator, {
    get(target, property, receiver) {
      if (property === 'cancel')
        return async (...args: Parameters<Orchestrator['cancel']>) => {
          await sleep(SLOW_MS);
          return target.cancel(...args);
        };
      const value: unknown = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('control client deadlines', () => {
  it('gives create, send, models and cancel their own deadlines: work longer than the default deadline still answers', async () => {
    const h = await harnesses({
      fake: {},
      deps: {
        defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
        modelsFor: async () => {
          await sleep(SLOW_MS);
          return CATALOG;
        },
      },
    });
    const server = await startOrchestratorServer({
      orchestrator: slowCancel(h.orchestrator),
      socketPath: socketPath(h.deps.stateDir),
      redact: (text) => text,
    });
    opened.push(server);
    const client = (await tryConnect(server.socketPath, { defaultTimeoutMs: CLIENT_DEFAULT_MS }))!;
    opened.push(client);

    expect(await client.list()).toEqual([]);
    const created = await client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    const sent = await client.sendMessage({ sessionId: created.sessionId, prompt: 'two' });
    expect(await client.models('fake')).toEqual(CATALOG);
    expect(await client.cancel(created.sessionId, sent.runId)).toMatchObject({ sessionId: created.sessionId });
    await client.wait([created.sessionId], 30_000);
  });
});
