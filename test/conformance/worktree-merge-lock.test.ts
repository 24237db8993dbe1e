import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, initRepo } from '../support/git-repo.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { byPrompt, executeStep, until } from './orchestrator-rig.js';
import { writeWord } from './worktree-rig.js';

// `merge` takes the workspace lock of the user's checkout: while a live turn of the real droid
// works in that checkout, merging a worktree session into it is refused with a clear message
// and changes nothing; once the turn has ended, the same merge goes through.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TOOL_LINGER_MS = 10_000;

describe('merge and the workspace lock', () => {
  it('is refused while a turn is live in the checkout, and merges once it has ended', async () => {
    const model = await rigs.model({
      steps: byPrompt({
        'write alpha': writeWord('alpha', 500),
        'long job': (request) => (toolResults(request).length > 0 ? { text: 'slept' } : executeStep('call_long_1', 'sleep 20')),
      }),
    });
    // Autonomy high: the policy allows the scripted commands (droid asks One Works before each).
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    const repo = rig.workspace;
    await initRepo(repo, { 'a.txt': 'one\n' });
    const main = await git(repo, 'rev-parse', 'main');

    const made = await rig.run(['run', '--worktree', '--no-hint', '-w', repo, 'write alpha']);
    expect(made.exitCode, made.stderr).toBe(0);
    const [alpha] = await rig.sessionIds();

    // A turn in the checkout itself (no worktree), still running its `sleep 20`.
    const long = await rig.run(['run', '--detach', '-w', repo, 'long job']);
    expect(long.exitCode, long.stderr).toBe(0);
    const busy = long.stdout.trim().split('\n').at(-1)!;
    await until(async () => (await rig.readEvents(busy)).some((event) => event.type === 'tool.call'));

    const refused = await rig.run(['merge', alpha!]);
    expect(refused.exitCode).toBe(7);
    expect(refused.stderr).toContain(`refused: ${repo} is in use by session ${busy}; merge once it is done (nothing was changed)`);
    expect(await git(repo, 'rev-parse', 'main')).toBe(main);
    expect(await git(repo, 'status', '--porcelain')).toBe('');

    const waited = await rig.run(['wait', busy, '--timeout', '120']);
    expect(waited.exitCode, waited.stderr).toBe(0);
    expect((await rig.readSession(busy)).runs[0]!.status).toBe('completed');
    const merged = await rig.run(['merge', alpha!]);
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect(await readFile(join(repo, 'feature.txt'), 'utf8')).toBe('alpha\n');
    expect(await git(repo, 'rev-parse', 'main')).not.toBe(main);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  }, 300_000);
});
