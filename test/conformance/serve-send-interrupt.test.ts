import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { TurnHandle } from '../../core/orchestrator/index.js';
import { CliRigs, type CliResult } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, executeStep, until } from './orchestrator-rig.js';

// The streaming `send --interrupt` (issue 5's steering) against `one-works serve` with the real
// droid: a turn sleeping in an Execute tool, a queued follow-up, then a steering send.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2's Execute supervisor polls every 2 s whether droid lives, then kills its group.
const TOOL_LINGER_MS = 10_000;

interface RunResult {
  type: 'result';
  sessionId: string;
  outcome: { status: string; text: string };
}

function lastJson<T>(result: CliResult): T {
  expect(result, result.stderr).toMatchObject({ exitCode: 0 });
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as T;
}

describe('send --interrupt with the real droid', () => {
  it('supersedes the queued turn, interrupts the live one, runs the message on the same native session and follows its own run; its request key replays it', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'long job': (request) => (toolResults(request).length > 0 ? { text: 'slept' } : executeStep('call_send_steer_1', 'sleep 2061')),
        'queued job': () => ({ text: 'must never run' }),
        'change of plan': () => ({ text: 'steered' }),
      }),
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    const server = rig.start(['serve']);
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));

    const first = lastJson<TurnHandle>(await rig.run(['--json', 'submit', '-w', rig.workspace, 'long job']));
    const id = first.sessionId;
    await until(() => rig.processes().some((p) => p.args === 'sleep 2061'));
    const native = (await rig.readSession(id)).nativeSessionId;
    expect(native).toBeTypeOf('string');
    expect(lastJson<TurnHandle>(await rig.run(['--json', 'send-queued', id, 'queued job']))).toMatchObject({
      runId: 'r2',
      state: 'queued',
    });

    const steered = lastJson<RunResult>(await rig.run(['--json', 'send', id, 'change of plan', '--interrupt', '--request-key', 'steer-1']));
    expect(steered).toMatchObject({ type: 'result', sessionId: id, outcome: { status: 'completed', text: 'steered' } });
    const record = await rig.readSession(id);
    expect(record.nativeSessionId).toBe(native);
    expect(record.runs.map((run) => [run.id, run.status, run.reason])).toEqual([
      ['r1', 'interrupted', expect.any(String)],
      ['r2', 'cancelled', 'superseded'],
      ['r3', 'completed', 'completed'],
    ]);

    // The same send again: the request key returns the original turn, which this follows.
    const replayed = lastJson<RunResult>(
      await rig.run(['--json', 'send', id, 'change of plan', '--interrupt', '--request-key', 'steer-1']),
    );
    expect(replayed).toMatchObject({ sessionId: id, outcome: { status: 'completed', text: 'steered' } });
    expect((await rig.readSession(id)).runs).toHaveLength(3);

    server.kill('SIGTERM');
    expect((await server.result).exitCode).toBe(0);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  }, 180_000);
});
