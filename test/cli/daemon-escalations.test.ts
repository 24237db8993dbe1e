import { AskBoard } from '../../core/permissions/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../core/adapter.js';
import type { EscalationAnswer, Escalator } from '../../core/permissions/index.js';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { EscalationRouter } from '../../cli/daemon/escalations.js';
import { startOrchestratorServer, type OrchestratorServer } from '../../cli/daemon/server.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { useOrchestratorHarnesses, type OrchestratorHarness } from '../core/orchestrator/orchestrator-harness.js';

// Escalated permission asks travel from the server to the client attached to the session, as
// server-to-client requests on its control connection; the session's own turn is not needed.

const harnesses = useOrchestratorHarnesses();
const opened: Array<OrchestratorClient | OrchestratorServer> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

const ASK: PermissionAsk = {
  requestId: 'req-1',
  kind: 'tool',
  tools: [
    { toolUseId: 'call_1', name: 'Execute', kind: 'execute', label: 'execute: echo hi > f.txt', command: 'echo hi > f.txt', input: {} },
  ],
  options: ['allow-once', 'allow-session', 'deny'],
};
const PROPOSAL = { reason: 'needs autonomy high' };

async function setup(h: OrchestratorHarness, timeoutMs = 5_000) {
  const router = new EscalationRouter({ board: new AskBoard(), askTimeoutMs: 0, terminalTimeoutMs: timeoutMs });
  let exitRequests = 0;
  const server = await startOrchestratorServer({
    orchestrator: h.orchestrator,
    socketPath: socketPath(h.deps.stateDir),
    redact: (text) => text,
    escalations: router,
    fingerprint: 'f'.repeat(64),
    auto: true,
    onExitRequest: () => (exitRequests += 1),
  });
  opened.push(server);
  const connect = async (): Promise<OrchestratorClient> => {
    const client = (await tryConnect(server.socketPath))!;
    opened.push(client);
    return client;
  };
  const client = await connect();
  const handle = await client.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
  await client.waitForRun(handle.sessionId, handle.runId);
  return { router, server, client, connect, sessionId: handle.sessionId, exitRequests: () => exitRequests };
}

const answering = (answer: EscalationAnswer, seen: PermissionAsk[] = []): Escalator => ({
  ask: async (ask) => {
    seen.push(ask);
    return answer;
  },
});

describe('escalations through the control socket', () => {
  it('declines as a policy decision when no client is attached', async () => {
    const { router, sessionId } = await setup(await harnesses({ fake: {} }));
    expect(await router.escalatorFor(sessionId).ask(ASK, PROPOSAL)).toMatchObject({
      decision: 'deny',
      by: 'policy',
      reason: expect.stringMatching(/no person/),
    });
  });

  it("forwards the ask to the attached client and uses its person's answer", async () => {
    const { router, client, sessionId } = await setup(await harnesses({ fake: {} }));
    const seen: PermissionAsk[] = [];
    await client.attachEscalator(
      sessionId,
      undefined,
      answering({ decision: 'allow', remember: true, by: 'human', reason: 'allowed at the terminal' }, seen),
    );
    const answer = await router.escalatorFor(sessionId).ask(ASK, PROPOSAL);
    expect(answer).toEqual({ decision: 'allow', remember: true, by: 'human', reason: 'allowed at the terminal', channel: 'terminal' });
    expect(seen).toEqual([ASK]);
    expect(router.takeAbandoned(ASK.requestId)).toBe(false);
  });

  it('asks the client following the live run when several follow the session', async () => {
    const { router, client, connect, sessionId } = await setup(await harnesses({ fake: {} }));
    const other = await connect();
    const mine: PermissionAsk[] = [];
    const theirs: PermissionAsk[] = [];
    const anyRun: PermissionAsk[] = [];
    await client.attachEscalator(sessionId, 'r2', answering({ decision: 'allow', by: 'human', reason: 'r2 follower' }, mine));
    await other.attachEscalator(sessionId, 'r3', answering({ decision: 'deny', by: 'human', reason: 'r3 follower' }, theirs));
    expect(await router.escalatorFor(sessionId, () => 'r2').ask(ASK, PROPOSAL)).toMatchObject({ reason: 'r2 follower' });
    expect(await router.escalatorFor(sessionId, () => 'r3').ask(ASK, PROPOSAL)).toMatchObject({ reason: 'r3 follower' });
    // A run nobody follows is declined, unless a client attached for every run.
    expect(await router.escalatorFor(sessionId, () => 'r4').ask(ASK, PROPOSAL)).toMatchObject({ decision: 'deny', by: 'policy' });
    const third = await connect();
    await third.attachEscalator(sessionId, undefined, answering({ decision: 'allow', by: 'human', reason: 'any run' }, anyRun));
    expect(await router.escalatorFor(sessionId, () => 'r4').ask(ASK, PROPOSAL)).toMatchObject({ reason: 'any run' });
    expect([mine.length, theirs.length, anyRun.length]).toEqual([1, 1, 1]);
  });

  it('marks an answer the client abandoned (its person interrupted) once', async () => {
    const { router, client, sessionId } = await setup(await harnesses({ fake: {} }));
    await client.attachEscalator(
      sessionId,
      undefined,
      answering({ decision: 'deny', by: 'policy', reason: 'the prompt was abandoned' }),
      () => true,
    );
    expect(await router.escalatorFor(sessionId).ask(ASK, PROPOSAL)).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(router.takeAbandoned(ASK.requestId)).toBe(true);
    expect(router.takeAbandoned(ASK.requestId)).toBe(false);
  });

  it('a cancel through the socket declines the open ask of the cancelled run as abandoned, without waiting for the client', async () => {
    const { router, client, sessionId } = await setup(await harnesses({ fake: {} }));
    const second = await client.sendMessage({ sessionId, prompt: 'again' });
    await client.waitForRun(sessionId, second.runId);
    // The person never answers: only the cancel can settle the ask.
    const never: Escalator = { ask: () => new Promise<EscalationAnswer>(() => undefined) };
    await client.attachEscalator(sessionId, second.runId, never);
    await client.attachEscalator(sessionId, undefined, never);
    const other = router.escalatorFor(sessionId, () => 'r1').ask({ ...ASK, requestId: 'req-other' }, PROPOSAL);
    const asked = router.escalatorFor(sessionId, () => second.runId).ask(ASK, PROPOSAL);
    await client.cancel(sessionId, second.runId);
    expect(await asked).toMatchObject({ decision: 'deny', by: 'policy', reason: expect.stringContaining('abandoned') });
    expect(router.takeAbandoned(ASK.requestId)).toBe(true);
    // An ask of another run is not touched by this run's cancel; a session-wide cancel settles it.
    const pending = await Promise.race([other.then(() => 'settled'), new Promise((resolve) => setTimeout(() => resolve('open'), 100))]);
    expect(pending).toBe('open');
    await client.cancel(sessionId);
    expect(await other).toMatchObject({ decision: 'deny', reason: expect.stringContaining('abandoned') });
  });

  it('declines once the attached client disconnected, and when it does not answer in time', async () => {
    const h = await harnesses({ fake: {} });
    const { router, client, connect, sessionId } = await setup(h, 200);
    await client.attachEscalator(sessionId, undefined, answering({ decision: 'allow', by: 'human' }));
    // Whether the server already saw the close or finds out while asking, the ask is declined.
    await client.close();
    expect(await router.escalatorFor(sessionId).ask(ASK, PROPOSAL)).toMatchObject({ decision: 'deny', by: 'policy' });
    const silent = await connect();
    await silent.attachEscalator(sessionId, undefined, { ask: () => new Promise<EscalationAnswer>(() => undefined) });
    expect(await router.escalatorFor(sessionId).ask(ASK, PROPOSAL)).toMatchObject({
      decision: 'deny',
      by: 'policy',
      reason: expect.stringMatching(/did not answer/),
    });
  });

  it('says hello with its fingerprint and exits on request only when this client is its only user', async () => {
    const h = await harnesses({ fake: {} });
    const { server, client, connect, exitRequests } = await setup(h);
    expect(await client.hello()).toMatchObject({
      fingerprint: 'f'.repeat(64),
      auto: true,
      pid: process.pid,
      clients: 1,
      live: 0,
      queued: 0,
    });
    const other = await connect();
    expect(await client.exitIfIdle()).toBe(false);
    await other.close();
    await h.until(() => server.clients() === 1);
    expect(await client.exitIfIdle()).toBe(true);
    await h.until(() => exitRequests() === 1);
  });
});
