import { mkdtemp, open, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { prepareSessionHome } from '../../../core/sandbox/index.js';
import { writeFileAtomic } from '../../../core/store/private-fs.js';

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
