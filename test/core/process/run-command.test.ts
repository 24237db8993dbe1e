import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OneWorksError } from '../../../core/errors.js';
import { runCommand } from '../../../core/process/run-command.js';

const PATH = '/usr/bin:/bin';
const base = { env: { PATH }, timeoutMs: 10_000, maxOutputBytes: 64 * 1024 };

let dir: string;
beforeEach(async () => {
  dir = await realpath(await mkdtemp(path.join(tmpdir(), 'ow-run-command-')));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('runCommand', () => {
  it('passes exactly the given environment and nothing of process.env', async () => {
    const result = await runCommand('/usr/bin/env', [], { ...base, env: { PATH, ONLY_THIS: 'yes' } });
    expect(result.stdout.split('\n').sort()).toEqual(['ONLY_THIS=yes', `PATH=${PATH}`]);
  });

  it('collects stdout, stderr and a non-zero exit code without throwing', async () => {
    const result = await runCommand('/bin/sh', ['-c', 'echo out; echo err >&2; exit 3'], { ...base, cwd: dir });
    expect(result).toEqual({ exitCode: 3, signal: null, stdout: 'out', stderr: 'err', timedOut: false, truncated: false });
  });

  it('runs in the given cwd', async () => {
    const result = await runCommand('/bin/sh', ['-c', 'pwd'], { ...base, cwd: dir });
    expect(result.stdout).toBe(dir);
  });

  it('kills the child when the timeout expires', async () => {
    const result = await runCommand('/bin/sh', ['-c', 'echo $$; exec sleep 30'], { ...base, timeoutMs: 300 });
    expect(result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGTERM' });
    const pid = Number(result.stdout);
    expect(pid).toBeGreaterThan(0);
    expect(() => process.kill(pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  });

  it('ends the whole process group at the deadline: children holding the pipes do not keep it waiting', async () => {
    // The shell starts a child that ignores SIGTERM and keeps stdout open, prints its pid, then waits.
    const script = 'trap "" TERM; (trap "" TERM; sleep 60) & echo $!; wait';
    const started = Date.now();
    const result = await runCommand('/bin/sh', ['-c', script], { ...base, timeoutMs: 500 });
    const elapsed = Date.now() - started;
    expect(result.timedOut).toBe(true);
    expect(elapsed).toBeLessThan(500 + 2_000 + 1_000);
    const grandchild = Number(result.stdout);
    expect(grandchild).toBeGreaterThan(0);
    expect(await goneWithin(grandchild, 2_000)).toBe(true);
  });

  it('stops a child whose output passes maxOutputBytes and truncates it', async () => {
    const result = await runCommand('/bin/sh', ['-c', 'while :; do echo 0123456789; done'], { ...base, maxOutputBytes: 1_000 });
    expect(result.truncated).toBe(true);
    expect(result.stdout.length).toBeLessThanOrEqual(1_000);
  });

  it('rejects with spawn_failed naming a missing file', async () => {
    const missing = path.join(dir, 'no-such-binary');
    const error = await runCommand(missing, [], base).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OneWorksError);
    expect(error).toMatchObject({ code: 'spawn_failed', message: `could not start ${missing}: ENOENT` });
  });

  it('rejects with spawn_failed for a file that is not executable', async () => {
    const script = path.join(dir, 'not-executable');
    await writeFile(script, '#!/bin/sh\necho hi\n', { mode: 0o644 });
    const error = await runCommand(script, [], base).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'spawn_failed', data: { file: script, errno: 'EACCES' } });
  });
});

// True once `pid` is gone or a zombie waiting for init to reap it (killed, not running).
async function goneWithin(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined || / Z /.test(stat.slice(stat.lastIndexOf(')')))) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
