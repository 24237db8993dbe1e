import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionAsk } from '../../core/adapter.js';
import { isOneWorksError } from '../../core/errors.js';
import { AskBoard, type EscalationAnswer } from '../../core/permissions/index.js';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { EscalationRouter } from '../../cli/daemon/escalations.js';
import { startOrchestratorServer, type OrchestratorServer } from '../../cli/daemon/server.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { useOrchestratorHarnesses, type OrchestratorHarness } from '../core/orchestrator/orchestrator-harness.js';

// Open asks on the server's board, answered through the control socket (as `one-works answer`
// and MCP do), racing the terminal that follows the turn, or timing out.

const harnesses = useOrchestratorHarnesses();
const opened: Array<OrchestratorClient | OrchestratorServer> = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

const ASK: PermissionAsk = {
  requestId: 'req-1',
  kind: 'tool',
  tools: [{ toolUseId: 'call_1', name: 'Execute', kind: 'execute', label: 'execute: npm test', command: 'npm test', input: {} }],
  options: ['allow-once', 'allow-session', 'deny'],
};
const PROPOSAL = { reason: 'needs autonomy high' };

async function setup(askTimeoutMs: number) {
  const board = new AskBoard();
  const h: OrchestratorHarness = await harnesses({ fake: {}, deps: { asks: board } });
  const router = new EscalationRouter({ board, askTimeoutMs, terminalTimeoutMs: 5_000 });
  const server = await startOrchestratorServer({
    orchestrator: h.orchestrator,
    socketPath: socketPath(h.deps.stateDir),
    redact: (t) => t,
    escalations: router,
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
  return { board, router, client, connect, h, sessionId: handle.sessionId };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 10));
}

describe('asks on the board, answered over the control socket', () => {
  it('keeps an ask open without a terminal until a client answers it; the second answer is told who won', async () => {
    const { router, client, connect, sessionId } = await setup(5_000);
    const pending = router.escalatorFor(sessionId, () => 'r1').ask(ASK, PROPOSAL);
    await until(async () => (await client.listAsks(sessionId)).length === 1);
    const [ask] = await client.listAsks(sessionId);
    expect(ask).toMatchObject({ sessionId, runId: 'r1', requestId: 'req-1', reason: 'needs autonomy high' });
    const other = await connect();
    const results = await Promise.allSettled([
      client.answerAsk({ askId: ask!.askId, choice: 'allow-session', channel: 'cli' }),
      other.answerAsk({ askId: ask!.askId, choice: 'deny', channel: 'mcp' }),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(isOneWorksError(lost.reason, 'ask_already_answered')).toBe(true);
    const won = results[0]!.status === 'fulfilled' ? 'cli' : 'mcp';
    expect(await pending).toMatchObject({ by: 'human', channel: won, decision: won === 'cli' ? 'allow' : 'deny' });
    expect(await client.listAsks()).toEqual([]);
  });

  it('declines by policy after askTimeoutMs, saying how to answer next time', async () => {
    const { router, client, sessionId } = await setup(100);
    const answer = await router.escalatorFor(sessionId).ask(ASK, PROPOSAL);
    expect(answer).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(answer.reason).toContain('nobody answered within 0.1 s');
    expect(answer.reason).toContain(`one-works asks ${sessionId}`);
    expect(await client.listAsks()).toEqual([]);
  });

  it('withdraws the terminal prompt of an ask answered elsewhere', async () => {
    const { router, client, connect, sessionId } = await setup(5_000);
    let signal: AbortSignal | undefined;
    await client.attachEscalator(sessionId, undefined, {
      ask: (_ask, proposal) =>
        new Promise<EscalationAnswer>((resolve) => {
          signal = proposal.signal;
          proposal.signal?.addEventListener('abort', () =>
            resolve({ decision: 'deny', by: 'policy', reason: 'answered through another channel' }),
          );
        }),
    });
    const pending = router.escalatorFor(sessionId).ask(ASK, PROPOSAL);
    await until(() => signal !== undefined);
    const other = await connect();
    const [ask] = await other.listAsks(sessionId);
    await other.answerAsk({ askId: ask!.askId, choice: 'allow', channel: 'cli' });
    expect(await pending).toMatchObject({ decision: 'allow', by: 'human', channel: 'cli' });
    await until(() => signal?.aborted === true);
  });

  it('settles an open ask as abandoned when its turn is cancelled', async () => {
    const { router, client, sessionId } = await setup(5_000);
    const pending = router.escalatorFor(sessionId, () => 'r9').ask(ASK, PROPOSAL);
    await until(async () => (await client.listAsks(sessionId)).length === 1);
    router.abandon(sessionId, 'r9');
    expect(await pending).toMatchObject({ decision: 'deny', by: 'policy' });
    expect(router.takeAbandoned('req-1')).toBe(true);
  });

  it('refuses an unknown ask and a session that does not exist', async () => {
    const { client } = await setup(5_000);
    await expect(client.answerAsk({ askId: 'ask-none', choice: 'allow', channel: 'cli' })).rejects.toMatchObject({ code: 'ask_not_found' });
    await expect(client.listAsks('s-nope')).rejects.toMatchObject({ code: 'session_not_found' });
  });
});
