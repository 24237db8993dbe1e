import { afterEach, describe, expect, it } from 'vitest';
import { git, initRepo } from '../support/git-repo.js';
import { CliRigs, RIG_API_KEY } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { droidCustomModel } from '../support/scripted-model.js';
import { writeWord } from './worktree-rig.js';

// `compare` over two scripted models on the real droid (one adapter exists): each model's
// session writes a different feature.txt in its own worktree, and a --check that accepts only
// one of them passes in one worktree and fails in the other; the table and the JSON say so.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TOOL_LINGER_MS = 10_000;
const CHECK = 'grep -qx alpha feature.txt';

describe('one-works compare --models', () => {
  it('runs one worktree session per model on one base and reports outcome, changes and the check of each', async () => {
    const alpha = await rigs.model({ steps: Array.from({ length: 8 }, () => writeWord('alpha', 1000)) });
    const beta = await rigs.model({ steps: Array.from({ length: 8 }, () => writeWord('beta', 1000)) });
    const a = droidCustomModel(alpha.baseUrl, { displayName: 'A', apiKey: RIG_API_KEY });
    const b = droidCustomModel(beta.baseUrl, { displayName: 'B', apiKey: RIG_API_KEY });
    const rig = await rigs.create({ baseUrl: alpha.baseUrl, droid: { model: a.modelId, customModels: [a.entry, b.entry] } });
    await initRepo(rig.workspace, { 'README.md': 'hello\n' });
    const main = await git(rig.workspace, 'rev-parse', 'main');
    const models = `${a.modelId},${b.modelId}`;

    // Autonomy high: the policy allows the scripted commands (droid asks One Works before each).
    const table = await rig.run(['compare', '-a', 'high', '--models', models, '--check', CHECK, '-w', rig.workspace, 'write the word']);
    expect(table.exitCode, table.stderr).toBe(0);
    const rowOf = (model: string): string => table.stdout.split('\n').find((line) => line.startsWith(`droid/${model} `)) ?? '';
    expect(rowOf(a.modelId)).toMatch(/completed .* 1 +\+1 -0 +passed$/);
    expect(rowOf(b.modelId)).toMatch(/completed .* 1 +\+1 -0 +failed \(exit 1\)$/);
    expect(table.stdout).toContain(`base ${main} · check: ${CHECK}`);
    // Progress while it ran, on stderr.
    expect(table.stderr).toMatch(/droid\/custom:A-0: session s-\w+ (running|queued)/);
    expect(table.stderr).toMatch(/droid\/custom:B-0: check failed/);

    const json = await rig.run([
      '--json',
      'compare',
      '-a',
      'high',
      '--models',
      models,
      '--check',
      CHECK,
      '-w',
      rig.workspace,
      'write the word',
    ]);
    expect(json.exitCode, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as {
      baseCommit: string;
      rows: Array<{
        model: string;
        sessionId: string;
        outcome: string;
        filesChanged: number;
        linesAdded: number;
        check: { passed: boolean; exitCode: number };
      }>;
    };
    expect(report.baseCommit).toBe(main);
    expect(
      report.rows.map((row) => [row.model, row.outcome, row.filesChanged, row.linesAdded, row.check.passed, row.check.exitCode]),
    ).toEqual([
      [a.modelId, 'completed', 1, 1, true, 0],
      [b.modelId, 'completed', 1, 1, false, 1],
    ]);
    // The sessions stay: each worktree holds its own model's file, for diff, send and merge.
    const [rowA, rowB] = report.rows;
    const records = await Promise.all([rig.readSession(rowA!.sessionId), rig.readSession(rowB!.sessionId)]);
    expect(records.map((record) => [record.runs[0]!.model, record.worktree!.baseCommit])).toEqual([
      [a.modelId, main],
      [b.modelId, main],
    ]);
    const diff = await rig.run(['diff', rowB!.sessionId]);
    expect(diff.stdout).toContain('+beta');
    expect(await git(rig.workspace, 'status', '--porcelain')).toBe('');
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  }, 400_000);
});
