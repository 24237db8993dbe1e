import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { chatMessages } from '../support/scripted-model-steps.js';
import { toolResults } from '../support/scripted-model.js';
import { filesContaining, HARNESS, referenceRig } from './process-runner-support.js';

// A second runner in another language (test/peers/python-runner.py, standard library only,
// written from the published protocol) passes the same protocol tests as the reference runner.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ADAPTER = `process:${HARNESS}`;
const PYTHON_RUNNER = fileURLToPath(new URL('../peers/python-runner.py', import.meta.url));
const PYTHON = { command: 'python3', args: [PYTHON_RUNNER] };

describe('process runner: a Python runner', () => {
  it('runs a tool call that writes a file, checkpoints, and a second turn in a new process carries the first', async () => {
    const { rig, model } = await referenceRig(
      rigs,
      [
        { toolCalls: [{ id: 'call_py', name: 'run_command', arguments: { command: 'echo py > proof.txt' } }] },
        (request) => ({
          text: `Tool: ${toolResults(request)[0]?.content ?? '(nothing)'}`,
          usage: { prompt_tokens: 3, completion_tokens: 2 },
        }),
        { text: 'Second.' },
      ],
      { ...PYTHON, autonomy: 'high' },
    );
    const first = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'write proof']);
    expect(first.exitCode, first.stderr + first.stdout).toBe(0);
    expect(await readFile(join(rig.workspace, 'proof.txt'), 'utf8')).toBe('py\n');
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.runs[0]).toMatchObject({ status: 'completed', text: 'Tool: (exit code 0)', usage: { reported: true } });
    expect(model.requests.find((r) => r.kind === 'step')?.headers.authorization).toBe(`Bearer ${RIG_API_KEY}`);
    await rig.closedEvents(id!);

    const second = await rig.run(['send', id!, 'again']);
    expect(second.exitCode, second.stderr).toBe(0);
    const events = await rig.closedEvents(id!, 2);
    expect(events.filter((e) => e.type === 'session.started').map((e) => (e as { resumed: boolean }).resumed)).toEqual([false, true]);
    const roles = chatMessages(model.requests.at(-1)!).map((m) => m.role);
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(events.filter((e) => e.type === 'log' && e.message.startsWith('checkpoint of run'))).toHaveLength(2);
    expect(await filesContaining(rig.stateDir, RIG_API_KEY)).toEqual([]);
  });
});
