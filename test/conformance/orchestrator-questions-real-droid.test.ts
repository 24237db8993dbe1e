import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tryConnect, type OrchestratorClient } from '../../cli/daemon/client.js';
import { socketPath } from '../../cli/daemon/wire.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, until } from './orchestrator-rig.js';

// readSession's pending questions with the real droid under `one-works serve`, which has no
// terminal: an AskUser questionnaire and an escalated Execute are declined for want of a
// person, and readSession says what was asked until a follow-up turn answers it.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// The AskUser input format of droid 0.225.2 (captures/ask-user.jsonl).
const QUESTIONNAIRE = ['1. [question] Which color should the button be?', '[topic] Color', '[option] Red', '[option] Blue', ''].join('\n');

describe('readSession pending questions with the real droid', () => {
  it('lists a declined question and a declined permission ask, and forgets them after the next turn', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'ask me': () => ({ toolCalls: [{ id: 'call_pending_ask', name: 'AskUser', arguments: { questionnaire: QUESTIONNAIRE } }] }),
        'write f.txt': (request) =>
          toolResults(request).length > 0
            ? { text: 'Could not write.' }
            : {
                toolCalls: [
                  {
                    id: 'call_pending_exec',
                    name: 'Execute',
                    arguments: { command: 'echo hi > f.txt', riskLevel: 'medium', riskLevelReason: 'writes a file' },
                  },
                ],
              },
        'blue please': () => ({ text: 'Blue it is.' }),
      }),
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const [askDir, execDir] = [join(rig.workspace, 'ask'), join(rig.workspace, 'exec')];
    await Promise.all([mkdir(askDir), mkdir(execDir)]);
    const server = rig.start(['serve']);
    await until(() => existsSync(socketPath(rig.stateDir)));
    const client = (await tryConnect(socketPath(rig.stateDir))) as OrchestratorClient;
    expect(client).toBeDefined();
    try {
      const asking = await client.createSession({ adapter: 'droid', workspace: askDir, prompt: 'ask me' });
      const writing = await client.createSession({ adapter: 'droid', workspace: execDir, prompt: 'write f.txt' });
      const waited = await client.wait([asking.sessionId, writing.sessionId], 60_000);
      expect(waited.timedOut).toBe(false);

      const asked = await client.readSession({ sessionId: asking.sessionId });
      expect(asked.summary.state).toBe('needs_attention');
      expect(asked.pendingQuestions).toEqual(['Color: Which color should the button be? (options: Red | Blue)']);
      const denied = await client.readSession({ sessionId: writing.sessionId });
      expect(denied.summary.state).toBe('needs_attention');
      expect(denied.pendingQuestions).toHaveLength(1);
      expect(denied.pendingQuestions[0]).toMatch(/^permission for .*echo hi > f\.txt.* was declined: no person available/);

      // A follow-up is how a person answers: the question is no longer pending.
      const answer = await client.sendMessage({ sessionId: asking.sessionId, prompt: 'blue please' });
      expect(await client.waitForRun(asking.sessionId, answer.runId)).toMatchObject({ runStatus: 'completed', text: 'Blue it is.' });
      expect((await client.readSession({ sessionId: asking.sessionId })).pendingQuestions).toEqual([]);
    } finally {
      await client.close();
      server.kill('SIGTERM');
      expect((await server.result).exitCode).toBe(0);
      expect(() => process.kill(server.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
      expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
    }
  });
});
