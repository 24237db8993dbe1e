import { afterEach, describe, expect, it } from 'vitest';
import { killAllChildrenSync, liveChildCount, spawnChild, type ChildHandle } from '../../../core/process/index.js';
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

describe('ChildHandle.stop', () => {
  it('ends stdin first, and a child that exits on EOF is not forced', async () => {
    const child = await start('echo.js');
    const exit = await child.stop('shutdown', { graceMs: 5000 });
    expect(exit).toEqual({ exitCode: 0, signal: null, stopReason: 'shutdown', forced: false });
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('tries the polite stop before ending stdin', async () => {
    const child = await start('echo.js');
    const exit = await child.stop('shutdown', {
      politeStop: async () => {
        child.stdin.write('exit\n');
      },
    });
    // echo.js exits 7 on "exit" and 0 on EOF: 7 shows the polite stop ran first.
    expect(exit.exitCode).toBe(7);
    expect(exit.forced).toBe(false);
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('goes on when the polite stop fails', async () => {
    const child = await start('echo.js');
    const exit = await child.stop('shutdown', { politeStop: () => Promise.reject(new Error('peer gone')) });
    expect(exit).toEqual({ exitCode: 0, signal: null, stopReason: 'shutdown', forced: false });
  });

  it('sends SIGTERM to the group when the child ignores stdin', async () => {
    const child = await start('forever.js', ['--allow-term']);
    await firstLine(child.stdout);
    const exit = await child.stop('timeout', { graceMs: 200 });
    expect(exit).toEqual({ exitCode: null, signal: 'SIGTERM', stopReason: 'timeout', forced: false });
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('escalates to SIGKILL when the child ignores SIGTERM', async () => {
    const child = await start('forever.js');
    await firstLine(child.stdout);
    const exit = await child.stop('cancel', { graceMs: 200 });
    expect(exit).toEqual({ exitCode: null, signal: 'SIGKILL', stopReason: 'cancel', forced: true });
    expect(probe(child.pid)).toBe('ESRCH');
  });

  it('shares one stop between concurrent callers and keeps the first reason', async () => {
    const child = await start('forever.js');
    await firstLine(child.stdout);
    const first = child.stop('cancel', { graceMs: 100 });
    const second = child.stop('shutdown', { graceMs: 100 });
    const [a, b] = await Promise.all([first, second]);
    expect(b).toEqual(a);
    expect(a.stopReason).toBe('cancel');
    expect(await child.stop('crash')).toEqual(a);
    expect(probe(child.pid)).toBe('ESRCH');
  });
});

describe('killAllChildrenSync', () => {
  it('kills every live child group at once', async () => {
    const children = [await start('forever.js'), await start('forever.js')];
    await Promise.all(children.map((child) => firstLine(child.stdout)));
    expect(liveChildCount()).toBeGreaterThanOrEqual(2);
    killAllChildrenSync();
    const exits = await Promise.all(children.map((child) => child.exited));
    for (const exit of exits) expect(exit.signal).toBe('SIGKILL');
    for (const child of children) expect(probe(child.pid)).toBe('ESRCH');
    expect(liveChildCount()).toBe(0);
  });
});
