import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findProcessesByEnv, sweepProcessesByEnvSync, sweepTrackedSync, trackSweep } from '../../../core/process/sweep.js';

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

// A detached process in a session of its own, like a command an agent's tool put in the background.
function startMarked(home: string): number {
  const child = spawn('sleep', ['300'], { env: { PATH: process.env.PATH ?? '', HOME: home }, detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid!;
}

// Right after spawn the child may not have exec'd yet (its environ is still the parent's).
async function waitMarked(home: string, pid: number): Promise<void> {
  for (let i = 0; i < 100 && !findProcessesByEnv('HOME', home).includes(pid); i++) await new Promise((r) => setTimeout(r, 20));
}

async function waitGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((r) => setTimeout(r, 20));
  return !isAlive(pid);
}

describe('sweepProcessesByEnv', () => {
  it('finds and kills processes carrying the exact HOME marker, and only those', async () => {
    const home = `/tmp/one-works-sweep-${process.pid}-${Date.now()}`;
    const marked = startMarked(home);
    const other = startMarked(`${home}-other`);
    try {
      await waitMarked(home, marked);
      await waitMarked(`${home}-other`, other);
      expect(findProcessesByEnv('HOME', home)).toEqual([marked]);
      expect(sweepProcessesByEnvSync('HOME', home)).toBe(1);
      expect(await waitGone(marked)).toBe(true);
      expect(isAlive(other)).toBe(true);
    } finally {
      for (const pid of [marked, other]) if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });

  it('sweeps tracked markers on the exit path', async () => {
    const home = `/tmp/one-works-sweep-tracked-${process.pid}-${Date.now()}`;
    const pid = startMarked(home);
    try {
      await waitMarked(home, pid);
      trackSweep('HOME', home);
      sweepTrackedSync();
      expect(await waitGone(pid)).toBe(true);
      expect(findProcessesByEnv('HOME', home)).toEqual([]);
    } finally {
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});
