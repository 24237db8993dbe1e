import { afterEach, describe, expect, it } from 'vitest';
import { git, initRepo } from '../support/git-repo.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { type AnthropicRequest, anthropicToolResults, startScriptedAnthropic } from '../support/scripted-anthropic.js';
import { writeWord } from './worktree-rig.js';

// `compare --adapters droid,claude-code` over the two real CLIs (droid 0.225.2 against the
// scripted OpenAI model, Claude Code 2.1.333 against the scripted Anthropic one): each writes
// a different feature.txt in its own worktree, and a --check that accepts only droid's passes
// in one worktree and fails in the other; the table and the JSON say so.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TOOL_LINGER_MS = 10_000;
const CHECK = 'grep -qx alpha feature.txt';

// Claude Code's turn: a Bash call writing "beta", then a closing text.
const writeBeta = (request: AnthropicRequest) =>
  anthropicToolResults(request).length > 0
    ? { text: 'wrote beta' }
    : {
        text: 'Writing.',
        toolCalls: [
          { id: `toolu_cmp_${Date.now()}`, name: 'Bash', input: { command: "printf 'beta\\n' > feature.txt", description: 'write' } },
        ],
      };

describe('one-works compare --adapters droid,claude-code', () => {
  it('runs one worktree session per adapter on one base and reports outcome, changes and the check of each', async () => {
    const droidModel = await rigs.model({ steps: Array.from({ length: 8 }, () => writeWord('alpha', 500)) });
    const claudeModel = await startScriptedAnthropic({ steps: Array.from({ length: 8 }, () => writeBeta) });
    rigs.defer(() => claudeModel.close());
    const rig = await rigs.create({ baseUrl: droidModel.baseUrl, claude: { baseUrl: claudeModel.baseUrl } });
    await initRepo(rig.workspace, { 'README.md': 'hello\n' });
    const main = await git(rig.workspace, 'rev-parse', 'main');
    const args = ['compare', '-a', 'high', '--adapters', 'droid,claude-code', '--check', CHECK, '-w', rig.workspace, 'write the word'];

    // Autonomy high: the policy allows the scripted commands of both agents.
    const table = await rig.run(args);
    expect(table.exitCode, `${table.stderr}\n${table.stdout}`).toBe(0);
    const rowOf = (adapter: string): string => table.stdout.split('\n').find((line) => line.startsWith(`${adapter} `)) ?? '';
    expect(rowOf('droid')).toMatch(/completed .* 1 +\+1 -0 +passed$/);
    expect(rowOf('claude-code')).toMatch(/completed .* 1 +\+1 -0 +failed \(exit 1\)$/);
    expect(table.stdout).toContain(`base ${main} · check: ${CHECK}`);

    const json = await rig.run(['--json', ...args]);
    expect(json.exitCode, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as {
      baseCommit: string;
      rows: Array<{
        adapter: string;
        sessionId: string;
        outcome: string;
        filesChanged: number;
        check: { passed: boolean; exitCode: number };
      }>;
    };
    expect(report.baseCommit).toBe(main);
    expect(report.rows.map((row) => [row.adapter, row.outcome, row.filesChanged, row.check.passed, row.check.exitCode])).toEqual([
      ['droid', 'completed', 1, true, 0],
      ['claude-code', 'completed', 1, false, 1],
    ]);
    // The sessions stay, each on its own adapter and worktree.
    const records = await Promise.all(report.rows.map((row) => rig.readSession(row.sessionId)));
    expect(records.map((record) => [record.adapter, record.worktree!.baseCommit])).toEqual([
      ['droid', main],
      ['claude-code', main],
    ]);
    const diff = await rig.run(['diff', report.rows[1]!.sessionId]);
    expect(diff.stdout, `diff exited ${diff.exitCode}: ${diff.stderr}`).toContain('+beta');
    expect(await git(rig.workspace, 'status', '--porcelain')).toBe('');
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  }, 400_000);
});
