import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForExit, waitForNoProcesses, waitForProcess } from '../support/rig-processes.js';
import { chatMessages } from '../support/scripted-model-steps.js';
import { HARNESS, referenceRig } from './process-runner-support.js';

// Interrupting the reference runner while One Works runs its slow tool: the command's process
// group is killed, the turn ends interrupted, nothing survives, and the conversation (the
// runner's native state) stays usable for the next turn.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const ADAPTER = `process:${HARNESS}`;

describe('process runner: interrupt', () => {
  it('SIGINT during a slow run_command: the turn is interrupted (exit 130), the tool stopped, no orphan; the next turn carries the history', async () => {
    const { rig, model } = await referenceRig(
      rigs,
      [{ toolCalls: [{ id: 'call_slow', name: 'run_command', arguments: { command: 'sleep 3031' } }] }, { text: 'Back again.' }],
      { autonomy: 'high' },
    );
    const cli = rig.start(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'wait a while']);
    const during = await waitForProcess(
      () => rig.processes(),
      (p) => p.args === 'sleep 3031',
    );
    expect(during.some((p) => p.args.includes('openai-runner.mjs'))).toBe(true);
    cli.kill('SIGINT');
    const result = await cli.result;
    expect(result.exitCode, result.stderr).toBe(130);

    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'interrupted' });
    const results = (await rig.readEvents(id!)).filter((e) => e.type === 'tool.result');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolUseId: 'call_slow', isError: true });
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
    expect(
      await waitForExit(
        during.map((p) => p.pid),
        10_000,
      ),
    ).toEqual([]);
    // The model was not asked to continue after the interrupt.
    expect(model.requests.filter((r) => r.kind === 'step')).toHaveLength(1);

    const next = await rig.run(['send', id!, 'are you there?']);
    expect(next.exitCode, next.stderr).toBe(0);
    const roles = chatMessages(model.requests.at(-1)!).map((m) => m.role);
    // system, the first prompt, the tool call, its (interrupted) result, the new prompt.
    expect(roles).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    // The interrupted turn was checkpointed too, and the next checkpoint extends it (append-only).
    const native = (await rig.readSession(id!)).nativeSessionId!;
    const store = join(rig.stateDir, 'sessions', id!, 'runner-checkpoints', native);
    const interrupted = await readFile(join(store, 'r1', 'files', 'conversation.jsonl'), 'utf8');
    expect(interrupted.split('\n').filter(Boolean)).toHaveLength(3);
    expect((await readFile(join(store, 'r2', 'files', 'conversation.jsonl'), 'utf8')).startsWith(interrupted)).toBe(true);
  });
});
