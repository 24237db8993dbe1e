import { chmod, mkdir, mkdtemp, open, readFile, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { prepareSessionHome } from '../../../core/sandbox/index.js';
import { ensurePrivateDir, ensurePrivateDirSync, writeFileAtomic } from '../../../core/store/private-fs.js';
import { isOneWorksError } from '../../../core/errors.js';

// writeFileAtomic: durable by default (the file and its directory fsynced), or only atomic.
const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

// Counts fsyncs through the FileHandle prototype (the file's and the directory's handles).
async function countSyncs(): Promise<{ count: () => number }> {
  const probe = await open(tmpdir(), 'r');
  const proto = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
  await probe.close();
  const spy = vi.spyOn(proto, 'sync');
  return { count: () => spy.mock.calls.length };
}

describe('writeFileAtomic', () => {
  it('fsyncs the file and its directory by default, and skips both with durable: false', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-private-fs-'));
    dirs.push(dir);
    const syncs = await countSyncs();
    await writeFileAtomic(join(dir, 'durable.json'), '{"a":1}\n');
    expect(syncs.count()).toBe(2);
    await writeFileAtomic(join(dir, 'seed.json'), '{"b":2}\n', 0o600, { durable: false });
    expect(syncs.count()).toBe(2);
    // Either way the file is complete, private, and no temp file is left.
    expect(await readFile(join(dir, 'seed.json'), 'utf8')).toBe('{"b":2}\n');
    expect((await stat(join(dir, 'seed.json'))).mode & 0o777).toBe(0o600);
    expect((await readdir(dir)).sort()).toEqual(['durable.json', 'seed.json']);
  });

  it('writes a session HOME seed without fsync: it is rewritten before every launch', async () => {
    const state = await mkdtemp(join(tmpdir(), 'ow-private-fs-'));
    dirs.push(state);
    const syncs = await countSyncs();
    const home = await prepareSessionHome(state, 's-0123456789', [{ path: '.factory/settings.json', content: '{"x":1}\n' }]);
    expect(syncs.count()).toBe(0);
    expect(await readFile(join(home, '.factory', 'settings.json'), 'utf8')).toBe('{"x":1}\n');
  });
});

// The synchronous variant (a store opened with syncReads) keeps the same promises.
describe.each([
  ['ensurePrivateDir', ensurePrivateDir],
  ['ensurePrivateDirSync', async (dir: string) => ensurePrivateDirSync(dir)],
])('%s', (_name, ensurePrivateDir) => {
  it('makes a missing directory and its parents 0700 and leaves an existing one as it is', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ow-private-fs-'));
    dirs.push(root);
    await ensurePrivateDir(join(root, 'a', 'b'));
    expect((await stat(join(root, 'a'))).mode & 0o777).toBe(0o700);
    expect((await stat(join(root, 'a', 'b'))).mode & 0o777).toBe(0o700);
    await mkdir(join(root, 'open'));
    await chmod(join(root, 'open'), 0o755);
    await ensurePrivateDir(join(root, 'open'));
    expect((await stat(join(root, 'open'))).mode & 0o777).toBe(0o755);
  });

  it('refuses a symlink (even to a directory) and a file with state_corrupt, writing nothing', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ow-private-fs-'));
    dirs.push(root);
    await mkdir(join(root, 'target'));
    await symlink(join(root, 'target'), join(root, 'link'));
    await writeFile(join(root, 'file'), 'x');
    for (const name of ['link', 'file']) {
      const error = await ensurePrivateDir(join(root, name)).catch((e: unknown) => e);
      expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
    }
    expect(await readdir(join(root, 'target'))).toEqual([]);
  });
});
