import { finished } from 'node:stream/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnChild, type ChildHandle } from '../../../core/process/index.js';
import { Redactor } from '../../../core/redact.js';
import { firstLine, nodeFixture, probe, waitUntilGone } from './process-helpers.js';

const started: ChildHandle[] = [];
const strays: number[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((child) => child.stop('shutdown', { graceMs: 200 })));
  for (const pid of strays.splice(0)) {
    if (probe(pid) === undefined) process.kill(pid, 'SIGKILL');
  }
});

async function grandchildOf(child: ChildHandle): Promise<number> {
  const { grandchild } = JSON.parse(await firstLine(child.stdout)) as { grandchild: number };
  strays.push(grandchild);
  return grandchild;
}

describe('exit and drain', () => {
  it('reaps a grandchild left in the group, which closes stdout, so exited settles', async () => {
    // A drain fallback far beyond the test timeout: settling must come from the group kill.
    const child = await spawnChild({ ...nodeFixture('grandchild-holds-stdout.js'), drainFallbackMs: 600_000 });
    started.push(child);
    const grandchild = await grandchildOf(child);
    const exit = await child.exited;
    expect(exit).toEqual({ exitCode: 0, signal: null, stopReason: undefined, forced: false });
    expect(probe(child.pid)).toBe('ESRCH');
    await waitUntilGone(grandchild);
    expect(probe(grandchild)).toBe('ESRCH');
  });

  it('settles after the drain fallback when a grandchild outside the group holds stdout', async () => {
    const child = await spawnChild({ ...nodeFixture('grandchild-holds-stdout.js', ['--escape']), drainFallbackMs: 300 });
    started.push(child);
    const grandchild = await grandchildOf(child);
    const exit = await child.exited;
    expect(exit.exitCode).toBe(0);
    // Settled while the pipe's other end was still alive: the fallback cut it.
    expect(probe(grandchild)).toBeUndefined();
    // Readers of stdout see EOF although the grandchild still holds the pipe.
    child.stdout.resume();
    await finished(child.stdout);
    expect(probe(child.pid)).toBe('ESRCH');
    process.kill(grandchild, 'SIGKILL');
    await waitUntilGone(grandchild);
    expect(probe(grandchild)).toBe('ESRCH');
  });
});

describe('stderr tail', () => {
  it('stays bounded when the child floods stderr and keeps the newest bytes', async () => {
    const child = await spawnChild({ ...nodeFixture('flood-stderr.js', [String(1024 * 1024), 'LAST-LINE']), stderrTailBytes: 4096 });
    started.push(child);
    const exit = await child.exited;
    expect(exit.exitCode).toBe(0);
    const tail = child.stderrTail();
    expect(Buffer.byteLength(tail)).toBeLessThanOrEqual(4096);
    expect(tail.endsWith('LAST-LINE\n')).toBe(true);
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('passes the tail through the redactor', async () => {
    const secret = 'sk-test-0123456789abcdef';
    const redactor = new Redactor();
    redactor.register(secret);
    const child = await spawnChild({ ...nodeFixture('flood-stderr.js', ['8192', `token=${secret}`]), redactor });
    started.push(child);
    await child.exited;
    const tail = child.stderrTail();
    expect(tail).toContain('token=[REDACTED]');
    expect(tail).not.toContain(secret);
  });
});
