import { mkdir, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isolationFor } from '../../../core/workspace/index.js';

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ow-isolation-')));
  await mkdir(join(root, 'repos/app/src'), { recursive: true });
  await mkdir(join(root, 'other'), { recursive: true });
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('isolationFor', () => {
  it('takes the most specific configured root containing the workspace, else the global default', async () => {
    const defaults = {
      isolation: 'none' as const,
      roots: [
        { path: join(root, 'repos'), isolation: 'worktree' as const },
        { path: join(root, 'repos/app'), isolation: 'none' as const },
      ],
    };
    expect(await isolationFor(join(root, 'repos'), defaults)).toBe('worktree');
    expect(await isolationFor(join(root, 'repos/app/src'), defaults)).toBe('none');
    expect(await isolationFor(join(root, 'other'), { ...defaults, isolation: 'worktree' })).toBe('worktree');
    expect(await isolationFor(join(root, 'other'), defaults)).toBe('none');
  });

  it('compares real paths and ignores a root that does not exist', async () => {
    await symlink(join(root, 'repos'), join(root, 'link'));
    const defaults = {
      isolation: 'none' as const,
      roots: [
        { path: join(root, 'link'), isolation: 'worktree' as const },
        { path: join(root, 'missing'), isolation: 'none' as const },
      ],
    };
    expect(await isolationFor(join(root, 'repos/app'), defaults)).toBe('worktree');
    // A sibling with the root's name as a prefix is not inside it.
    await mkdir(join(root, 'repos-evil'));
    expect(await isolationFor(join(root, 'repos-evil'), defaults)).toBe('none');
  });
});
