import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseDroidVersion } from '../../adapters/droid/cli-source.js';
import { checkCliVersion, createPrepareServices } from '../../core/install/index.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, processesReferring, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';

// `source: path` binaries that are not droid: the checks keep their deadline and say what the
// binary did (exit status, first bytes printed, redacted), never a bare pipe error.

let box: CliSandbox;
beforeEach(async () => {
  box = await createCliSandbox({ prefix: 'ow-bincheck-' });
});
afterEach(async () => {
  await box.remove();
});

const SECRET = 'fk-garbage-secret-5150';

async function script(name: string, body: string): Promise<string> {
  const file = join(box.root, name);
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

function pathConfig(binary: string): string {
  return ['adapters:', '  droid:', `    cli: { source: path, version: 0.225.2, path: ${binary} }`, ''].join('\n');
}

// Hangs on --version, and leaves a child that ignores SIGTERM holding stdout.
const HANGS = 'trap "" TERM\n(trap "" TERM; sleep 300) &\nsleep 300';

describe('binary checks of a source: path CLI', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('ends a --version that hangs, children included, within its deadline (+ 2 s)', async () => {
    const binary = await script('hangs', HANGS);
    const started = Date.now();
    const error = await checkCliVersion(binary, '>=0.225.0 <0.226.0', {
      services: createPrepareServices(),
      displayName: 'droid',
      parseVersion: parseDroidVersion,
      timeoutMs: 1_000,
    }).catch((caught: unknown) => caught);
    expect(Date.now() - started).toBeLessThan(1_000 + 2_000);
    expect(error).toMatchObject({ code: 'probe_failed', message: expect.stringContaining('did not answer --version within 1000 ms') });
    expect(processesReferring(binary)).toEqual([]);
  });

  it('`adapters which` refuses the hanging binary after the 15 s deadline, not when its children let go', async () => {
    const binary = await script('hangs', HANGS);
    await box.writeConfig(pathConfig(binary));
    const started = Date.now();
    const which = await box.run(['adapters', 'which']);
    // 15 s deadline + 2 s to end the group, plus the CLI's own start on a loaded machine.
    expect(Date.now() - started).toBeLessThan(15_000 + 2_000 + 10_000);
    expect(which.exitCode).toBe(5);
    expect(which.stderr).toContain(`droid at ${binary} did not answer --version within 15000 ms`);
    expect(processesReferring(binary)).toEqual([]);
  });

  it('reports the exit status and the first bytes (redacted) of a binary that prints garbage on --version', async () => {
    const binary = await script('garbage', `printf '\\001garbage ${SECRET} not a version\\n'\necho 'oops' >&2\nexit 3`);
    await box.writeConfig(pathConfig(binary));
    const which = await box.run(['adapters', 'which'], { FACTORY_API_KEY: SECRET });
    expect(which.exitCode).toBe(5);
    expect(which.stderr).toContain(
      `droid at ${binary} exited with status 3 on --version; it printed "\\u0001garbage [REDACTED] not a version" on stdout and "oops" on stderr`,
    );
    expect(which.stderr).not.toContain(SECRET);
    expect(which.stderr).not.toContain('EPIPE');
    expect(which.stderr).not.toMatch(STACK_LINE);
  });

  it('reports the exit status and first bytes when a binary passes --version but prints garbage for the probe', async () => {
    const binary = await script(
      'garbage',
      `if [ "$1" = --version ]; then echo 0.225.2; exit 0; fi\nprintf 'garbage ${SECRET} not json\\n'\nexit 3`,
    );
    await box.writeConfig(pathConfig(binary));
    const probe = await box.run(['adapters', 'probe'], { FACTORY_API_KEY: SECRET });
    expect(probe.exitCode).toBe(5);
    expect(probe.stderr).toContain(
      'it exited with status 3 before answering initialize_session; it printed "garbage [REDACTED] not json" on stdout',
    );
    expect(probe.stderr).not.toContain(SECRET);
    expect(probe.stderr).not.toContain('EPIPE');
  });
});
