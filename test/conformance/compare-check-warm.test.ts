import { afterEach, describe, expect, it } from 'vitest';
import { initRepo } from '../support/git-repo.js';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { droidCustomModel } from '../support/scripted-model.js';
import { writeWord } from './worktree-rig.js';

// A `--check` runs with the session's HOME, and when a session's agent exits One Works ends every
// process with that HOME. A check that outlasts the agent's warm window must not be ended with it:
// the agent is stopped before the check starts. On the real droid, warm for 1.5 s after its turn,
// with a check that takes 4 s. (CI once saw compare's check fail with no exit code when the agent's
// idle close landed during it.)

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('one-works compare --check with a warm agent', () => {
  it('passes a check that runs longer than the agent stays warm', async () => {
    const model = await rigs.model({ steps: Array.from({ length: 8 }, () => writeWord('alpha', 1000)) });
    const a = droidCustomModel(model.baseUrl, { displayName: 'A', apiKey: RIG_API_KEY });
    const b = droidCustomModel(model.baseUrl, { displayName: 'B', apiKey: RIG_API_KEY });
    const rig = await rigs.create({
      baseUrl: model.baseUrl,
      droid: { model: a.modelId, customModels: [a.entry, b.entry] },
      orchestrator: { keepWarmMs: 1500 },
    });
    await initRepo(rig.workspace, { 'README.md': 'hello\n' });
    const check = 'sleep 4 && grep -qx alpha feature.txt';
    const table = await rig.run([
      'compare',
      '-a',
      'high',
      '--models',
      `${a.modelId},${b.modelId}`,
      '--check',
      check,
      '-w',
      rig.workspace,
      'write',
    ]);
    expect(table.exitCode, table.stderr).toBe(0);
    for (const id of [a.modelId, b.modelId]) {
      expect(
        table.stdout.split('\n').find((line) => line.startsWith(`droid/${id} `)),
        table.stdout,
      ).toMatch(/completed .* passed$/);
    }
  }, 120_000);
});
