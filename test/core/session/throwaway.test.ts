import { access } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { withThrowawaySandbox } from '../../../core/session/throwaway.js';

const ECHO = fileURLToPath(new URL('../../fixtures/processes/echo.js', import.meta.url));

function expectGone(pid: number | undefined): void {
  expect(pid).toBeTypeOf('number');
  let code: string | undefined;
  try {
    process.kill(pid!, 0);
  } catch (error) {
    code = (error as NodeJS.ErrnoException).code;
  }
  expect(code).toBe('ESRCH');
}

describe('withThrowawaySandbox', () => {
  it('stops the children it launched and removes the sandbox after the body resolves', async () => {
    let pid: number | undefined;
    let workdir = '';
    const result = await withThrowawaySandbox({ purpose: 'test' }, async (sandbox) => {
      workdir = sandbox.workdir;
      const child = await sandbox.launch({ command: process.execPath, args: [ECHO], cwd: sandbox.workdir, env: {}, secrets: [] }, []);
      pid = child.pid;
      expect(process.kill(pid!, 0)).toBe(true);
      return 'done';
    });
    expect(result).toBe('done');
    expectGone(pid);
    expect(dirname(workdir)).toMatch(/one-works-test-[^/]+$/);
    await expect(access(dirname(workdir))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("passes the body's error through unchanged and still cleans up", async () => {
    let pid: number | undefined;
    let workdir = '';
    const failure = new Error('body failed');
    const outcome = withThrowawaySandbox({ purpose: 'test' }, async (sandbox) => {
      workdir = sandbox.workdir;
      pid = (await sandbox.launch({ command: process.execPath, args: [ECHO], cwd: sandbox.workdir, env: {}, secrets: [] }, [])).pid;
      throw failure;
    });
    await expect(outcome).rejects.toBe(failure);
    expectGone(pid);
    await expect(access(dirname(workdir))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("registers the given secrets and every launch's secrets with its redactor", async () => {
    const redacted = await withThrowawaySandbox({ purpose: 'test', secrets: ['sk-given-1234'] }, async (sandbox) => {
      await sandbox.launch({ command: process.execPath, args: [ECHO], cwd: sandbox.workdir, env: {}, secrets: ['sk-launch-5678'] }, []);
      return sandbox.redactor.redact('a sk-given-1234 b sk-launch-5678 c');
    });
    expect(redacted).toBe('a [REDACTED] b [REDACTED] c');
  });
});
