import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnChild, type ChildHandle } from '../../../core/process/index.js';
import { isOneWorksError } from '../../../core/errors.js';
import { firstLine, nodeFixture, probe } from './process-helpers.js';

const started: ChildHandle[] = [];

async function start(name: string, args: string[] = []): Promise<ChildHandle> {
  const child = await spawnChild(nodeFixture(name, args));
  started.push(child);
  return child;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((child) => child.stop('shutdown', { graceMs: 200 })));
});

describe('spawnChild', () => {
  it('echoes over stdin and stdout, then exits on its own when stdin ends', async () => {
    const child = await start('echo.js');
    child.stdin.write('hello\n');
    expect(await firstLine(child.stdout)).toBe('hello');
    child.stdin.end();
    const exit = await child.exited;
    expect(exit).toEqual({ exitCode: 0, signal: null, stopReason: undefined, forced: false });
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('settles exited with the exit code of a child that exits at once', async () => {
    const child = await start('exit-now.js', ['3']);
    const exit = await child.exited;
    expect(exit).toEqual({ exitCode: 3, signal: null, stopReason: undefined, forced: false });
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('keeps no stop reason when stop comes after the child already exited', async () => {
    const child = await start('exit-now.js', ['0']);
    await child.exited;
    const exit = await child.stop('cancel');
    expect(exit.stopReason).toBeUndefined();
    expect(exit.forced).toBe(false);
  });

  it('passes exactly the given environment, nothing of process.env', async () => {
    const env = { PATH: process.env.PATH ?? '', ONE_WORKS_MARKER: 'yes' };
    const child = await spawnChild({ ...nodeFixture('print-env.js'), env });
    started.push(child);
    const printed = JSON.parse(await firstLine(child.stdout)) as Record<string, string>;
    await child.exited;
    expect(printed).toEqual(env);
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('runs the child in its own process group', async () => {
    const child = await start('forever.js', ['--allow-term']);
    await firstLine(child.stdout);
    // The group id equals the child's pid: signalling -pid reaches it.
    expect(() => process.kill(-child.pid, 0)).not.toThrow();
    await child.stop('shutdown', { graceMs: 200 });
    expect(probe(child.pid)).toBe('ESRCH');
  });
});

describe('spawnChild failures', () => {
  it('rejects with spawn_failed naming a missing binary', async () => {
    const command = '/nonexistent/one-works-no-such-binary';
    const error = await spawnChild({ command, args: [], cwd: tmpdir(), env: {} }).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'spawn_failed')).toBe(true);
    expect((error as Error).message).toContain(command);
    expect((error as Error).message).toContain('ENOENT');
  });

  it('names a missing working directory', async () => {
    const cwd = path.join(tmpdir(), 'one-works-no-such-dir-x9');
    const error = await spawnChild({ command: process.execPath, args: ['-e', '0'], cwd, env: {} }).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'spawn_failed')).toBe(true);
    expect((error as Error).message).toContain(cwd);
  });

  it('rejects with spawn_failed for a file that is not executable', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'one-works-spawn-'));
    try {
      const command = path.join(dir, 'not-executable');
      await writeFile(command, '#!/bin/sh\nexit 0\n');
      await chmod(command, 0o600);
      const error = await spawnChild({ command, args: [], cwd: dir, env: {} }).catch((e: unknown) => e);
      expect(isOneWorksError(error, 'spawn_failed')).toBe(true);
      expect((error as Error).message).toContain('EACCES');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
