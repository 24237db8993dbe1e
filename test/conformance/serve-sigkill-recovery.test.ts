import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { TurnHandle } from '../../core/orchestrator/index.js';
import { CliRigs, type CliResult } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, executeStep, until } from './orchestrator-rig.js';

// SIGKILL the orchestrator service mid-turn, then start it again: the queued turn is
// cancelled/queue_lost (never replayed), the live one is unknown and its session refuses to
// continue, and no droid (or tool) of the dead orchestrator is left running.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

function json<T>(result: CliResult): T {
  expect(result, result.stderr).toMatchObject({ exitCode: 0 });
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as T;
}

describe('one-works serve killed with SIGKILL mid-turn', () => {
  it('recovers on restart: queue_lost, unknown, refusal to continue, no orphan', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'long job': (request) => (toolResults(request).length > 0 ? { text: 'slept' } : executeStep('call_sigkill_long_1', 'sleep 45')),
        'job B': () => ({ text: 'B done' }),
      }),
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    const config = parse(await readFile(rig.configPath, 'utf8')) as Record<string, unknown>;
    await writeFile(rig.configPath, stringify({ ...config, orchestrator: { maxConcurrentRuns: 1 } }));
    const [a, b] = ['a', 'b'].map((name) => join(rig.workspace, name)) as [string, string];
    await Promise.all([a, b].map((dir) => mkdir(dir)));
    const socket = join(rig.stateDir, 'orchestrator.sock');

    const first = rig.start(['serve']);
    await until(() => existsSync(socket));
    const live = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', a, 'long job']));
    const queued = json<TurnHandle>(await rig.run(['--json', 'submit', '-w', b, 'job B']));
    expect(queued.state).toBe('queued');
    await until(() => rig.processes().some((p) => p.args === 'sleep 45'));

    first.kill('SIGKILL');
    await first.result.catch(() => undefined);

    const second = rig.start(['serve']);
    try {
      await until(async () => (await rig.readSession(queued.sessionId)).runs[0]?.status === 'cancelled');
      const agents = await waitForNoProcesses(
        () => rig.processes().filter((p) => p.args === 'sleep 45' || /droid exec/.test(p.args)),
        15_000,
      );
      expect(agents).toEqual([]);
      expect((await rig.readSession(queued.sessionId)).runs[0]).toMatchObject({ status: 'cancelled', reason: 'queue_lost' });
      const liveRecord = await rig.readSession(live.sessionId);
      expect(liveRecord.status).toBe('needs_attention');
      expect(liveRecord.runs[0]).toMatchObject({ status: 'unknown' });
      const refused = await rig.run(['send-queued', live.sessionId, 'carry on']);
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toMatch(/unknown/);
    } finally {
      second.kill('SIGTERM');
      expect((await second.result).exitCode).toBe(0);
    }
  });
});
