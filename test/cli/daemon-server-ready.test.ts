import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { startOrchestratorServer, type OrchestratorServer, type OrchestratorServerOptions } from '../../cli/daemon/server.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { OneWorksError } from '../../core/errors.js';
import type { Orchestrator } from '../../core/orchestrator/index.js';
import { useOrchestratorHarnesses } from '../core/orchestrator/orchestrator-harness.js';

// Issue 15: `serve` listens while its orchestrator is created (the recovery of a dead owner's
// runs, the request keys), so that the client that started it is answered sooner. Its hello is
// answered at once; every other request waits until the orchestrator exists.

const harnesses = useOrchestratorHarnesses();
const opened: Array<OrchestratorClient | OrchestratorServer> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

// A creation under way, settled by the test.
function pendingOrchestrator(): { promise: Promise<Orchestrator>; resolve: (o: Orchestrator) => void; reject: (e: unknown) => void } {
  let resolve!: (o: Orchestrator) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<Orchestrator>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

// A server started over an orchestrator whose creation is under way (`creating`, settled by the
// test into the harness's orchestrator `h.orchestrator`); `options` adds to its options.
async function startServerWhileCreating(options: Partial<OrchestratorServerOptions> = {}) {
  const h = await harnesses({ fake: {} });
  const creating = pendingOrchestrator();
  const server = await startOrchestratorServer({
    orchestrator: creating.promise,
    socketPath: socketPath(h.deps.stateDir),
    redact: (text) => text,
    ...options,
  });
  opened.push(server);
  return { h, creating, server };
}

async function connect(path: string): Promise<OrchestratorClient> {
  const client = await tryConnect(path);
  if (!client) throw new Error('the server did not accept a connection');
  opened.push(client);
  return client;
}

describe('orchestrator control socket before the orchestrator exists', () => {
  it('answers hello at once and holds every other request until the orchestrator is created', async () => {
    const { h, creating, server } = await startServerWhileCreating({ fingerprint: 'f1' });
    const client = await connect(server.socketPath);
    expect(await client.hello()).toMatchObject({ fingerprint: 'f1', live: 0, queued: 0, clients: 1 });
    let listed: unknown;
    const list = client.list().then((sessions) => {
      listed = sessions;
      return sessions;
    });
    const handle = client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    // A hello sent after them is answered while they wait.
    await client.hello();
    expect(listed).toBeUndefined();
    creating.resolve(h.orchestrator);
    expect(await list).toEqual([]);
    const { sessionId, runId } = await handle;
    expect(await client.waitForRun(sessionId, runId)).toMatchObject({ status: 'completed', text: 'reply to hello' });
  });

  it('fails the waiting requests with the error of a creation that failed', async () => {
    const { creating, server } = await startServerWhileCreating();
    const client = await connect(server.socketPath);
    const list = client.list();
    await client.hello();
    creating.reject(new OneWorksError('state_corrupt', 'could not recover session s-0000000001: its record is unreadable'));
    await expect(list).rejects.toMatchObject({ code: 'state_corrupt', message: expect.stringContaining('could not recover') });
  });

  it('counts no idle time before the orchestrator exists', async () => {
    let idled = false;
    const { h, creating, server } = await startServerWhileCreating({
      idleExitMs: 20,
      onIdle: () => {
        idled = true;
      },
    });
    // Reached once (no first-client grace), then left alone while the creation goes on.
    await (await connect(server.socketPath)).close();
    await sleep(300);
    expect(idled).toBe(false);
    creating.resolve(h.orchestrator);
    for (let waited = 0; !idled && waited < 5_000; waited += 20) await sleep(20);
    expect(idled).toBe(true);
  });
});
