import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { lastUserText } from '../support/scripted-model.js';
import { chatMessages, contentText } from '../support/scripted-model-steps.js';

// `one-works fork`: a new session on the real droid whose first model request carries the
// source session's history up to the chosen run, and nothing after it.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const execute = (id: string, command: string) => ({
  toolCalls: [{ id, name: 'Execute', arguments: { command, riskLevel: 'low', riskLevelReason: 'harmless' } }],
});

describe('one-works fork', () => {
  it("starts a new session whose first turn carries the source's history up to --run", async () => {
    const model = await rigs.model({
      steps: [execute('call_fork_1', 'echo forked > f.txt'), { text: 'First reply.' }, { text: 'Second reply.' }, { text: 'Fork reply.' }],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const first = await rig.run(['run', '-a', 'high', '--workspace', rig.workspace, '-t', 'source', 'make the file']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [source] = await rig.sessionIds();
    const second = await rig.run(['send', source!, 'the second question']);
    expect(second.exitCode, second.stderr).toBe(0);

    const fork = await rig.run(['fork', source!, '--run', 'r1', 'what now?']);
    expect(fork.exitCode, fork.stderr).toBe(0);
    expect(fork.stdout).toContain('Fork reply.');
    const ids = await rig.sessionIds();
    expect(ids).toHaveLength(2);
    const forkId = ids.find((id) => id !== source)!;
    const record = await rig.readSession(forkId);
    const sourceRecord = await rig.readSession(source!);
    expect(record).toMatchObject({
      workspace: rig.workspace,
      adapter: 'droid',
      title: 'fork of source',
      forkedFrom: { sessionId: source, runId: 'r1' },
    });
    expect(record.nativeSessionId).toEqual(expect.any(String));
    expect(record.nativeSessionId).not.toBe(sourceRecord.nativeSessionId);

    // The fork's first (and only) model request: a fresh conversation whose one user message is
    // the transcript of r1 and the new prompt; nothing of r2.
    const call = model.requests.filter((r) => r.kind === 'step').at(-1)!;
    const user = lastUserText(call);
    expect(user).toContain(`Forked from One Works session ${source} up to run r1`);
    expect(user).toContain('User: make the file');
    expect(user).toContain('Tool execute: echo forked > f.txt → ok:');
    expect(user).toContain('Assistant: First reply.');
    expect(user.trimEnd().endsWith('what now?')).toBe(true);
    expect(user).not.toContain('the second question');
    expect(user).not.toContain('Second reply.');
    const assistants = chatMessages(call)
      .filter((m) => m.role === 'assistant')
      .map((m) => contentText(m.content));
    expect(assistants).toEqual([]);
  });

  it('refuses a run the source does not have, with exit 2 and no new session', async () => {
    const model = await rigs.model({ steps: [{ text: 'Only reply.' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const first = await rig.run(['run', '--workspace', rig.workspace, 'hello']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [source] = await rig.sessionIds();
    const fork = await rig.run(['fork', source!, '--run', 'r7', 'x']);
    expect(fork.exitCode).toBe(2);
    expect(fork.stderr).toContain(`session ${source} has no run r7 to fork from (runs: r1)`);
    expect(await rig.sessionIds()).toEqual([source]);
  });
});
