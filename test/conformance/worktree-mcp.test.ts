import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { git, initRepo } from '../support/git-repo.js';
import { CliRigs, ONE_WORKS_BIN, type CliRig } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { byPrompt } from './orchestrator-rig.js';
import { call, expectReaped } from './mcp-e2e-support.js';
import { writeWord } from './worktree-rig.js';

// Worktree sessions over MCP (`one-works mcp` on stdio, the real SDK client) against the real
// orchestrator, the real droid and real git: the isolation an approved root sets, worktree: false,
// the worktree facts of session_status and `sessions`, and diff_session, merge_session and
// discard_session on a turn that really changed a file. Also run and submit under that root.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TOOL_LINGER_MS = 10_000;

interface Facts {
  path: string;
  branch: string;
  baseRef: string;
  state: string;
  mergedInto: string[];
}
type Status = { sessionId: string; workspace: string; worktree?: Facts };

// Approves `repo` with isolation: worktree and `plain` without (the global default stays none).
async function approveRoots(rig: CliRig, repo: string, plain: string): Promise<void> {
  const config = parse(await readFile(rig.configPath, 'utf8')) as { workspaces: Record<string, unknown> };
  config.workspaces = { approved: [{ path: repo, isolation: 'worktree' }, plain] };
  await writeFile(rig.configPath, stringify(config));
}

describe('worktree sessions over MCP with the real droid', () => {
  it("honours a root's isolation in create_session, run and submit; session_status, diff, merge and discard", async () => {
    const model = await rigs.model({
      steps: byPrompt({ 'write alpha': writeWord('alpha', 500), 'write beta': writeWord('beta', 500), 'say hi': () => ({ text: 'hi' }) }),
    });
    // Autonomy high: the policy allows the scripted commands (droid asks One Works before each).
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    const repo = rig.workspace;
    const plain = join(rig.root, 'plain');
    await mkdir(plain);
    await initRepo(repo, { 'a.txt': 'one\n' });
    await initRepo(plain, { 'b.txt': 'two\n' });
    await approveRoots(rig, repo, plain);

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
      cwd: rig.root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'conformance', version: '0' });
    await client.connect(transport);
    const mcpPid = transport.pid!;
    const create = async (args: Record<string, unknown>): Promise<string> => {
      const { sessionId } = await call<{ sessionId: string }>(client, 'create_session', args);
      const waited = await call<{ timedOut: boolean }>(client, 'wait_for_sessions', { sessions: [sessionId], timeoutSeconds: 50 });
      expect(waited.timedOut).toBe(false);
      return sessionId;
    };
    const status = (id: string): Promise<Status> => call<Status>(client, 'session_status', { session: id });
    let alpha = '';
    let beta = '';
    try {
      // The root says worktree: create_session without `worktree` runs in a worktree.
      alpha = await create({ workspace: repo, prompt: 'write alpha' });
      const live = await status(alpha);
      expect(live.worktree).toMatchObject({
        path: join(rig.stateDir, 'worktrees', alpha),
        branch: `ow/${alpha}`,
        baseRef: 'main',
        state: 'live',
        mergedInto: [],
      });
      expect(live.workspace).toBe(live.worktree!.path);
      expect(await readFile(join(live.worktree!.path, 'feature.txt'), 'utf8')).toBe('alpha\n');
      expect(existsSync(join(repo, 'feature.txt'))).toBe(false);

      const diff = await call<{ patch: string; files: Array<{ path: string; added: number }> }>(client, 'diff_session', {
        session: alpha,
      });
      expect(diff.files).toEqual([{ path: 'feature.txt', added: 1, removed: 0 }]);
      expect(diff.patch).toContain('+++ b/feature.txt\n@@ -0,0 +1 @@\n+alpha\n');

      const merged = await call<{ into: string; commit: string }>(client, 'merge_session', { session: alpha });
      expect(merged.into).toBe('main');
      expect(await git(repo, 'rev-parse', 'main')).toBe(merged.commit);
      expect(await readFile(join(repo, 'feature.txt'), 'utf8')).toBe('alpha\n');
      expect((await status(alpha)).worktree).toMatchObject({ state: 'merged', mergedInto: ['main'] });

      // worktree: false overrides the root: the session runs in the checkout itself.
      const inPlace = await create({ workspace: repo, prompt: 'say hi', worktree: false });
      expect(await status(inPlace)).toMatchObject({ workspace: repo });
      expect((await status(inPlace)).worktree).toBeUndefined();
      // A root without its own isolation: the global default (none).
      const elsewhere = await create({ workspace: plain, prompt: 'say hi' });
      expect((await status(elsewhere)).worktree).toBeUndefined();

      beta = await create({ workspace: repo, prompt: 'write beta' });
      const betaPath = (await status(beta)).worktree!.path;
      const discarded = await call<Status>(client, 'discard_session', { session: beta });
      expect(discarded.worktree).toMatchObject({ state: 'discarded', branch: `ow/${beta}` });
      expect(existsSync(betaPath)).toBe(false);
      expect(await git(repo, 'branch', '--list', `ow/${beta}`)).toBe('');
      expect(await readFile(join(repo, 'feature.txt'), 'utf8')).toBe('alpha\n');
    } finally {
      await client.close();
    }
    await expectReaped(mcpPid);

    // The CLI under the same root: run and submit make worktrees, --no-worktree does not.
    const idOf = (stdout: string): string => stdout.trim().split('\n').at(-1)!;
    const ran = await rig.run(['run', '--detach', '-w', repo, 'say hi']);
    const submitted = await rig.run(['submit', '-w', repo, 'say hi']);
    const notIsolated = await rig.run(['run', '--detach', '--no-worktree', '-w', repo, 'say hi']);
    for (const result of [ran, submitted, notIsolated]) expect(result.exitCode, result.stderr).toBe(0);
    const [ranId, submittedId, notIsolatedId] = [ran, submitted, notIsolated].map((result) => idOf(result.stdout));
    const waited = await rig.run(['wait', ranId!, submittedId!, notIsolatedId!, '--timeout', '120']);
    expect(waited.exitCode, waited.stderr).toBe(0);

    const rows = new Map(
      (await rig.run(['--json', 'sessions'])).stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { sessionId: string; worktree: Facts | null })
        .map((row) => [row.sessionId, row.worktree]),
    );
    expect(rows.get(alpha)).toMatchObject({ state: 'merged', mergedInto: ['main'], branch: `ow/${alpha}` });
    expect(rows.get(beta)).toMatchObject({ state: 'discarded' });
    expect(rows.get(ranId!)).toMatchObject({ state: 'live', branch: `ow/${ranId}`, path: join(rig.stateDir, 'worktrees', ranId!) });
    expect(rows.get(submittedId!)).toMatchObject({ state: 'live', branch: `ow/${submittedId}` });
    expect(rows.get(notIsolatedId!)).toBeNull();

    const shown = await rig.run(['sessions', 'show', alpha]);
    expect(shown.stdout).toContain(`  worktree:  ${join(rig.stateDir, 'worktrees', alpha)} (merged into main)`);
    expect(shown.stdout).toContain(`  branch:    ow/${alpha} from main at `);
    const shownJson = JSON.parse((await rig.run(['--json', 'sessions', 'show', beta])).stdout) as { worktree: { state: string } };
    expect(shownJson.worktree.state).toBe('discarded');

    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  }, 400_000);
});
