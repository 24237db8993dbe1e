import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { approveWorkspace } from '../../../core/orchestrator/worktree-ops.js';
import type { OrchestratorDeps } from '../../../core/orchestrator/index.js';

// Issue 15: a new session's workspace is resolved to its real path once, for its isolation and its
// approval alike (each resolution is file system round trips on the way to the agent's spawn).

// Every path core/ asks the real path of (the test's own calls go to the original).
const asked = vi.hoisted(() => [] as string[]);
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    realpath: (file: string, ...rest: unknown[]) => {
      asked.push(String(file));
      return (actual.realpath as (...args: unknown[]) => Promise<string>)(file, ...rest);
    },
  };
});

let base: string;
beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'ow-approve-workspace-')));
  asked.length = 0;
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

function depsFor(approvedRoots: string[]): OrchestratorDeps {
  return {
    approvedRoots,
    approvalSource: { configKey: 'workspaces.approved' },
    isolation: { isolation: 'none', roots: [] },
  } as unknown as OrchestratorDeps;
}

describe('approveWorkspace', () => {
  it('asks the real path of the workspace once, and approves it by that path', async () => {
    const root = path.join(base, 'root');
    await mkdir(path.join(root, 'ws'), { recursive: true });
    await symlink(path.join(root, 'ws'), path.join(base, 'link'));
    asked.length = 0;
    const approved = await approveWorkspace(depsFor([root]), path.join(base, 'link'), undefined);
    expect(approved).toEqual({ workspace: path.join(root, 'ws') });
    expect(asked.filter((file) => file === path.join(base, 'link'))).toHaveLength(1);
  });

  it('still refuses a workspace outside every approved root, and one that does not exist', async () => {
    const root = path.join(base, 'root');
    await mkdir(path.join(base, 'outside'), { recursive: true });
    await mkdir(root, { recursive: true });
    await expect(approveWorkspace(depsFor([root]), path.join(base, 'outside'), undefined)).rejects.toMatchObject({
      code: 'workspace_not_approved',
      message: expect.stringContaining('is not inside an approved root'),
    });
    await expect(approveWorkspace(depsFor([root]), path.join(root, 'missing'), undefined)).rejects.toMatchObject({
      code: 'workspace_not_approved',
      message: expect.stringContaining('does not exist'),
    });
  });
});
