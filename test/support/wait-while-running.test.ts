import { describe, expect, it } from 'vitest';
import { type CliResult, waitWhileRunning } from './one-works-cli.js';

// waitWhileRunning: a test waiting on something its command should cause ends as soon as the
// command exited without causing it, with the rig's report (exit code, stderr, orchestrator.log).

const rig = { report: async () => 'rig /tmp/x:\n  `one-works run` exited 5 after 10100 ms\n  orchestrator.log: (the log)' };
const running = (): { result: Promise<CliResult> } => ({ result: new Promise<CliResult>(() => undefined) });
const exited = (): { result: Promise<CliResult> } => ({ result: Promise.resolve({ exitCode: 5, stdout: '', stderr: 'no server' }) });

describe('waitWhileRunning', () => {
  it('returns what the check found while the command runs', async () => {
    let calls = 0;
    const value = await waitWhileRunning(rig, running(), 'the thing', async () => (++calls >= 3 ? 'found' : undefined));
    expect(value).toBe('found');
    expect(calls).toBe(3);
  });

  it('fails at once with the report when the command exited and the check finds nothing', async () => {
    const started = Date.now();
    const error = await waitWhileRunning(rig, exited(), 'the first model request', async () => undefined, 60_000).catch((e: unknown) => e);
    expect((error as Error).message).toBe(`the command exited before the first model request\n${await rig.report()}`);
    // Long before its 60 s: the command's exit ended the wait.
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('takes what the command did before it exited', async () => {
    expect(await waitWhileRunning(rig, exited(), 'the thing', async () => 'done before exiting')).toBe('done before exiting');
  });

  it('fails with the report after its timeout while the command runs', async () => {
    const error = await waitWhileRunning(rig, running(), 'the thing', async () => undefined, 250).catch((e: unknown) => e);
    expect((error as Error).message).toBe(`timed out after 250 ms waiting for the thing\n${await rig.report()}`);
  });
});
