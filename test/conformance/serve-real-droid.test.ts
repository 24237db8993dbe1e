import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { SessionSummary, TurnHandle, WaitResult } from '../../core/orchestrator/index.js';
import { CliRigs, type CliResult } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, executeStep, until } from './orchestrator-rig.js';

// `one-works serve` in the background with the real droid and a scripted model; `submit`,
// `wait` and `cancel` are separate CLI processes talking to it over <state>/orchestrator.sock.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2's Execute supervisor polls every 2 s whether droid lives, then kills its group.
const TOOL_LINGER_MS = 10_000;

const sleeper = (id: string, seconds: number) => (request: Parameters<typeof toolResults>[0]) =>
  toolResults(request).length > 0 ? { text: `${id} slept` } : executeStep(id, `sleep ${seconds}`);

function json<T>(result: CliResult): T {
  expect(result, result.stderr).toMatchObject({ exitCode: 0 });
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as T;
}

describe('one-works serve with the real droid', () => {
  it('runs submitted sessions on two workspaces, waits for both, cancels a long turn freeing its slot, and exits 0 on SIGTERM stopping a live turn', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'job A': () => ({ text: 'A done' }),
        'job B': () => ({ text: 'B done' }),
        'long job': sleeper('call_serve_long_1', 30),
        'job C': () => ({ text: 'C done' }),
      }),
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    // One slot: a cancelled turn must give it back for the next session to run at all.
    const config = parse(await readFile(rig.configPath, 'utf8')) as Record<string, unknown>;
    await writeFile(rig.configPath, stringify({ ...config, orchestrator: { maxConcurrentRuns: 1, cancelGraceMs: 2_000 } }));
    const [a, b, c] = ['a', 'b', 'c'].map((name) => join(rig.workspace, name)) as [string, string, string];
    await Promise.all([a, b, c].map((dir) => mkdir(dir)));

    const server = rig.start(['serve']);
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));

    const first = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', a, 'job A']));
    const second = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', b, 'job B']));
    expect(first.sessionId).not.toBe(second.sessionId);
    const waited = json<WaitResult>(await rig.run(['--json', 'wait', first.sessionId, second.sessionId, '--timeout', '120']));
    expect(waited.timedOut).toBe(false);
    expect(waited.settled.map((s) => [s.sessionId, s.latestRun?.status]).sort()).toEqual(
      [
        [first.sessionId, 'completed'],
        [second.sessionId, 'completed'],
      ].sort(),
    );
    for (const [handle, workspace] of [
      [first, a],
      [second, b],
    ] as const) {
      const record = await rig.readSession(handle.sessionId);
      expect(record.workspace).toBe(workspace);
      expect(record.runs.map((run) => run.status)).toEqual(['completed']);
    }

    // A queued follow-up on the first session runs in the server too.
    const follow = json<TurnHandle>(await rig.run(['--json', 'send-queued', first.sessionId, 'job A follow-up', '--request-key', 'k1']));
    expect(follow).toMatchObject({ sessionId: first.sessionId, runId: 'r2' });
    const repeated = json<TurnHandle>(await rig.run(['--json', 'send-queued', first.sessionId, 'job A follow-up', '--request-key', 'k1']));
    expect(repeated).toEqual(follow);
    json<WaitResult>(await rig.run(['--json', 'wait', first.sessionId, '--timeout', '120']));
    expect((await rig.readSession(first.sessionId)).runs.map((run) => run.status)).toEqual(['completed', 'completed']);

    const long = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', c, 'long job']));
    await until(() => rig.processes().some((p) => p.args === 'sleep 30'));
    // A short wait times out and still exits 0, naming the working session.
    const timedOut = await rig.run(['wait', long.sessionId, '--timeout', '0.2']);
    expect(timedOut.exitCode).toBe(0);
    expect(timedOut.stdout).toContain(`still working: ${long.sessionId}`);
    const cancelled = json<SessionSummary>(await rig.run(['--json', 'cancel', long.sessionId]));
    expect(cancelled).toMatchObject({
      sessionId: long.sessionId,
      state: 'idle',
      queueDepth: 0,
      latestRun: { runId: 'r1', status: 'interrupted' },
    });
    expect((await rig.readSession(long.sessionId)).runs.map((run) => run.status)).toEqual(['interrupted']);
    // The only slot is free again: the next session runs to completion.
    const next = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', a, 'job C']));
    const done = json<WaitResult>(await rig.run(['--json', 'wait', next.sessionId, '--timeout', '120']));
    expect(done.settled).toMatchObject([{ sessionId: next.sessionId, latestRun: { status: 'completed' } }]);

    // SIGTERM with a live turn: the server cancels it, stops droid and exits 0.
    const live = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', c, 'long job']));
    await until(() => rig.processes().some((p) => p.args === 'sleep 30'));
    server.kill('SIGTERM');
    const exit = await server.result;
    expect(exit.exitCode, exit.stderr).toBe(0);
    expect(existsSync(join(rig.stateDir, 'orchestrator.sock'))).toBe(false);
    expect(() => process.kill(server.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
    expect((await rig.readSession(live.sessionId)).runs.map((run) => run.status)).toEqual(['interrupted']);
    // The API key never reached the clients' output.
    expect(exit.stderr).not.toContain('sk-rig-secret');
  });
});
