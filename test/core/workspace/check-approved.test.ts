import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalWorkspace, checkApproved } from '../../../core/workspace/index.js';
import { isOneWorksError, type OneWorksError } from '../../../core/errors.js';

let base: string;
let root: string;

beforeAll(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'one-works-ws-')));
  root = path.join(base, 'root');
  await mkdir(path.join(root, 'sub', 'deep'), { recursive: true });
  await mkdir(path.join(base, 'root-evil'));
  await mkdir(path.join(base, 'other'));
  await writeFile(path.join(root, 'file.txt'), 'x');
  await symlink(path.join(base, 'other'), path.join(root, 'escape'));
  await symlink(path.join(root, 'sub'), path.join(root, 'inner'));
  await symlink(root, path.join(base, 'root-alias'));
});

afterAll(async () => {
  await rm(base, { recursive: true, force: true });
});

async function refusal(workspace: string, roots: string[], configPath?: string): Promise<OneWorksError> {
  const error = await checkApproved(workspace, roots, { configKey: 'workspaces.approved', ...(configPath ? { configPath } : {}) }).catch(
    (e: unknown) => e,
  );
  expect(isOneWorksError(error, 'workspace_not_approved')).toBe(true);
  return error as OneWorksError;
}

describe('canonicalWorkspace', () => {
  it('resolves symlinks and dot segments to a real path', async () => {
    expect(await canonicalWorkspace(path.join(root, 'inner'))).toBe(path.join(root, 'sub'));
    expect(await canonicalWorkspace(`${root}/sub/deep/../..`)).toBe(root);
  });

  it('refuses a missing path and a file, naming them', async () => {
    const missing = path.join(base, 'nope');
    await expect(canonicalWorkspace(missing)).rejects.toThrow(`workspace ${missing} does not exist`);
    await expect(canonicalWorkspace(path.join(root, 'file.txt'))).rejects.toThrow('is not a directory');
  });
});

describe('checkApproved', () => {
  it('approves the root itself and directories below it', async () => {
    expect(await checkApproved(root, [root])).toBe(root);
    expect(await checkApproved(path.join(root, 'sub', 'deep'), [root])).toBe(path.join(root, 'sub', 'deep'));
  });

  it('approves a symlink inside the root that stays inside it', async () => {
    expect(await checkApproved(path.join(root, 'inner'), [root])).toBe(path.join(root, 'sub'));
  });

  it('approves through a symlinked root, comparing real paths', async () => {
    expect(await checkApproved(path.join(root, 'sub'), [path.join(base, 'root-alias')])).toBe(path.join(root, 'sub'));
  });

  it('refuses .. traversal out of the root', async () => {
    const error = await refusal(`${root}/../other`, [root]);
    expect(error.message).toContain(path.join(base, 'other'));
  });

  it('refuses a sibling that shares the root as a string prefix', async () => {
    await refusal(path.join(base, 'root-evil'), [root]);
  });

  it('refuses a symlink inside the root that points outside it, showing where it really goes', async () => {
    const error = await refusal(path.join(root, 'escape'), [root]);
    expect(error.message).toContain(`(really ${path.join(base, 'other')})`);
  });

  it('refuses a parent of the root', async () => {
    await refusal(base, [root]);
  });

  it('ignores approved roots that do not exist', async () => {
    await refusal(path.join(base, 'other'), [path.join(base, 'missing-root')]);
  });

  it('names the config key and file to edit', async () => {
    const error = await refusal(path.join(base, 'other'), [root], '/etc/one-works.yaml');
    expect(error.message).toContain('workspaces.approved in /etc/one-works.yaml');
    expect(error.data).toMatchObject({ canonical: path.join(base, 'other'), configKey: 'workspaces.approved' });
  });

  it('accepts any of several roots', async () => {
    const other = path.join(base, 'other');
    expect(await checkApproved(other, [root, other])).toBe(other);
  });
});
