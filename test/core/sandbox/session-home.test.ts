import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile, lstat } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { prepareSessionHome } from '../../../core/sandbox/index.js';
import { isOneWorksError } from '../../../core/errors.js';

let state: string;

beforeEach(async () => {
  state = path.join(await mkdtemp(path.join(tmpdir(), 'one-works-home-')), 'state');
});

afterEach(async () => {
  await rm(path.dirname(state), { recursive: true, force: true });
});

async function modeOf(target: string): Promise<number> {
  return (await stat(target)).mode & 0o777;
}

describe('prepareSessionHome', () => {
  it('creates <state>/sessions/<id>/home with mode 0700 and the four XDG roots', async () => {
    const home = await prepareSessionHome(state, 's-1', []);
    expect(home).toBe(path.join(state, 'sessions', 's-1', 'home'));
    expect(home).not.toBe(homedir());
    expect(await modeOf(home)).toBe(0o700);
    for (const dir of ['.config', '.cache', '.local', '.local/share', '.local/state']) {
      expect(await modeOf(path.join(home, dir))).toBe(0o700);
    }
    expect(await modeOf(path.join(state, 'sessions', 's-1'))).toBe(0o700);
  });

  it('writes seed files with mode 0600 by default, the given mode otherwise, and 0700 parents', async () => {
    const home = await prepareSessionHome(state, 's-1', [
      { path: '.factory/settings.json', content: '{"a":1}' },
      { path: '.factory/hooks/check.sh', content: '#!/bin/sh\n', mode: 0o700 },
    ]);
    expect(await readFile(path.join(home, '.factory/settings.json'), 'utf8')).toBe('{"a":1}');
    expect(await modeOf(path.join(home, '.factory/settings.json'))).toBe(0o600);
    expect(await modeOf(path.join(home, '.factory/hooks/check.sh'))).toBe(0o700);
    expect(await modeOf(path.join(home, '.factory'))).toBe(0o700);
    expect(await modeOf(path.join(home, '.factory/hooks'))).toBe(0o700);
    expect(await readdir(path.join(home, '.factory'))).toEqual(['hooks', 'settings.json']);
  });

  it('is stable: keeps existing content, rewrites seed files and makes HOME private again', async () => {
    const home = await prepareSessionHome(state, 's-1', [{ path: '.factory/settings.json', content: 'v1' }]);
    await writeFile(path.join(home, '.factory/sessions.db'), 'agent data');
    await chmod(home, 0o755);
    const again = await prepareSessionHome(state, 's-1', [{ path: '.factory/settings.json', content: 'v2' }]);
    expect(again).toBe(home);
    expect(await readFile(path.join(home, '.factory/sessions.db'), 'utf8')).toBe('agent data');
    expect(await readFile(path.join(home, '.factory/settings.json'), 'utf8')).toBe('v2');
    expect(await modeOf(home)).toBe(0o700);
  });

  it('refuses seed paths that are absolute or escape HOME', async () => {
    for (const bad of ['/etc/passwd', '../escape', '.factory/../../escape', '.', '']) {
      const error = await prepareSessionHome(state, 's-1', [{ path: bad, content: 'x' }]).catch((e: unknown) => e);
      expect(isOneWorksError(error, 'internal')).toBe(true);
    }
    expect(await readdir(path.join(state, 'sessions', 's-1'))).toEqual(['home']);
  });

  it('refuses to write through a symlinked directory planted in HOME', async () => {
    const home = await prepareSessionHome(state, 's-1', []);
    const outside = path.join(path.dirname(state), 'outside');
    await mkdir(outside);
    await symlink(outside, path.join(home, '.factory'));
    const error = await prepareSessionHome(state, 's-1', [{ path: '.factory/settings.json', content: 'x' }]).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
    expect(await readdir(outside)).toEqual([]);
  });

  it('replaces a symlink planted at a seed file path instead of following it', async () => {
    const home = await prepareSessionHome(state, 's-1', [{ path: '.factory/settings.json', content: 'v1' }]);
    const outsideFile = path.join(path.dirname(state), 'victim.txt');
    await writeFile(outsideFile, 'untouched');
    await rm(path.join(home, '.factory/settings.json'));
    await symlink(outsideFile, path.join(home, '.factory/settings.json'));
    await prepareSessionHome(state, 's-1', [{ path: '.factory/settings.json', content: 'v2' }]);
    expect(await readFile(outsideFile, 'utf8')).toBe('untouched');
    expect((await lstat(path.join(home, '.factory/settings.json'))).isSymbolicLink()).toBe(false);
  });

  it('writes many seeds under new shared parents, each complete, and a path seeded twice with its last content', async () => {
    const seeds = Array.from({ length: 12 }, (_, i) => ({ path: `.factory/skills/s${i % 3}/file-${i}.md`, content: `content ${i}` }));
    const home = await prepareSessionHome(state, 's-1', [
      ...seeds,
      { path: '.factory/settings.json', content: 'first' },
      { path: '.factory/settings.json', content: 'last' },
    ]);
    for (const seed of seeds) expect(await readFile(path.join(home, seed.path), 'utf8')).toBe(seed.content);
    expect(await readFile(path.join(home, '.factory/settings.json'), 'utf8')).toBe('last');
    for (const dir of ['.factory', '.factory/skills', '.factory/skills/s0', '.factory/skills/s2'])
      expect(await modeOf(path.join(home, dir))).toBe(0o700);
    // No temp file is left beside any seed.
    expect((await readdir(path.join(home, '.factory'))).sort()).toEqual(['settings.json', 'skills']);
    expect((await readdir(path.join(home, '.factory/skills/s1'))).sort()).toEqual(['file-1.md', 'file-10.md', 'file-4.md', 'file-7.md']);
  });

  it('refuses session ids that are not a single safe path segment', async () => {
    for (const bad of ['../x', 'a/b', '..', '']) {
      const error = await prepareSessionHome(state, bad, []).catch((e: unknown) => e);
      expect(isOneWorksError(error, 'usage')).toBe(true);
    }
  });
});
