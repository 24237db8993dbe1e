import { afterEach, describe, expect, it } from 'vitest';
import { spawnChild, type ChildHandle } from '../../../core/process/index.js';
import { firstLine, fixture, probe, waitUntilGone } from './process-helpers.js';

const parents: ChildHandle[] = [];
const strays: number[] = [];

afterEach(async () => {
  await Promise.all(parents.splice(0).map((parent) => parent.stop('shutdown', { graceMs: 200 })));
  for (const pid of strays.splice(0)) if (probe(pid) === undefined) process.kill(-pid, 'SIGKILL');
});

// Starts a One Works stand-in that spawns a SIGTERM-ignoring child and then exits.
async function parentThatExits(how: 'exit' | 'throw'): Promise<{ parent: ChildHandle; child: number }> {
  const parent = await spawnChild({
    command: process.execPath,
    args: ['--import', 'tsx', fixture('parent-exits.ts'), how],
    cwd: fixture('.'),
    env: { PATH: process.env.PATH ?? '' },
  });
  parents.push(parent);
  const { child } = JSON.parse(await firstLine(parent.stdout)) as { child: number };
  strays.push(child);
  return { parent, child };
}

describe('installExitCleanup', () => {
  it('kills live children when the process exits', async () => {
    const { parent, child } = await parentThatExits('exit');
    expect((await parent.exited).exitCode).toBe(0);
    await waitUntilGone(child);
    expect(probe(child)).toBe('ESRCH');
  });

  it('kills live children when the process dies of an uncaught exception', async () => {
    const { parent, child } = await parentThatExits('throw');
    expect((await parent.exited).exitCode).not.toBe(0);
    await waitUntilGone(child);
    expect(probe(child)).toBe('ESRCH');
  });
});
