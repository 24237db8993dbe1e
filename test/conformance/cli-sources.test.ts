import { chmod, mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { conformanceValue, createCliSandbox, processesReferring, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';

const RANGE_0225 = '>=0.225.0 <0.226.0';

let box: CliSandbox;

beforeEach(async () => {
  box = await createCliSandbox({ prefix: 'ow-cli-sources-' });
});
afterEach(async () => {
  await box.remove();
});

// A directory holding `droid`, a symlink to a real droid binary, as a user's PATH entry would.
async function binDirWith(target: string): Promise<{ dir: string; droid: string }> {
  const dir = join(box.root, 'bin');
  await mkdir(dir);
  const droid = join(dir, 'droid');
  await symlink(target, droid);
  return { dir, droid };
}

const cliBlock = (lines: string[]): string => ['adapters:', '  droid:', '    cli:', ...lines.map((l) => `      ${l}`), ''].join('\n');

function expectRefusal(text: string, binary: string): void {
  expect(text).toContain(`droid at ${binary} is 0.215.0, outside the pinned range ${RANGE_0225} (adapters.droid.cli.version 0.225.2)`);
}

describe('source: system with the real droid on PATH', () => {
  it('refuses the real 0.215.0 while 0.225.2 is pinned', async () => {
    const { dir, droid } = await binDirWith(conformanceValue('ONE_WORKS_TEST_DROID_0215'));
    await box.writeConfig(cliBlock(['source: system', 'version: 0.225.2']));
    const PATH = `${dir}:${box.env.PATH}`;
    const which = await box.run(['adapters', 'which'], { PATH });
    expect(which.exitCode).toBe(4);
    expect(which.stdout).toBe('');
    expectRefusal(which.stderr, droid);
    expect(which.stderr).not.toMatch(STACK_LINE);

    const list = await box.run(['adapters', 'list'], { PATH });
    expect(list.exitCode).toBe(4);
    expectRefusal(list.stdout, droid);
    expect(processesReferring(box.root)).toEqual([]);
  });

  it('selects the real 0.225.2 found on PATH', async () => {
    const { dir, droid } = await binDirWith(conformanceValue('ONE_WORKS_TEST_DROID'));
    await box.writeConfig(cliBlock(['source: system']));
    const which = await box.run(['adapters', 'which'], { PATH: `${dir}:${box.env.PATH}` });
    expect(which.exitCode).toBe(0);
    expect(which.stdout).toBe(droid);
  });
});

describe('source: path with the real droid', () => {
  it('refuses the real 0.215.0 binary while 0.225.2 is pinned', async () => {
    const binary = conformanceValue('ONE_WORKS_TEST_DROID_0215');
    await box.writeConfig(cliBlock(['source: path', `path: ${binary}`, 'version: 0.225.2']));
    const which = await box.run(['adapters', 'which']);
    expect(which.exitCode).toBe(4);
    expectRefusal(which.stderr, binary);

    const list = await box.run(['--json', 'adapters', 'list']);
    expect(list.exitCode).toBe(4);
    expectRefusal((JSON.parse(list.stdout) as { error: string }).error, binary);
  });

  it('prints the path of the real 0.225.2 binary and exits 0', async () => {
    const binary = conformanceValue('ONE_WORKS_TEST_DROID');
    await box.writeConfig(cliBlock(['source: path', `path: ${binary}`, 'version: 0.225.2']));
    const which = await box.run(['adapters', 'which']);
    expect(which.exitCode).toBe(0);
    expect(which.stdout).toBe(binary);
    expect(which.stderr).not.toContain('one-works:');
  });
});

describe('doctor with the managed droid', () => {
  it.each([
    { version: '0.225.2', protocol: '1.220.0' },
    { version: '0.215.0', protocol: '1.206.0' },
  ])('reports every droid line ok for $version, including the protocol', async ({ version, protocol }) => {
    const cache = conformanceValue('ONE_WORKS_TEST_CACHE');
    const stateDir = join(box.root, 'state');
    await mkdir(stateDir);
    await chmod(stateDir, 0o700);
    await box.writeConfig(
      [`state:\n  directory: ${stateDir}`, `cache:\n  directory: ${cache}`, cliBlock(['source: managed', `version: ${version}`])].join(
        '\n',
      ),
    );
    const range = version === '0.225.2' ? RANGE_0225 : '>=0.215.0 <0.216.0';
    const result = await box.run(['doctor']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n').slice(0, 5)).toEqual([
      `ok    droid binary: ${join(cache, 'cli', 'droid', version, 'bin', 'droid')} (managed) runs and reports ${version}`,
      `ok    droid version: ${version} within ${range}`,
      `ok    droid version facts: announced apiVersion 1.0.0, protocolVersion ${protocol}; expected apiVersion 1.0.0, protocolVersion ${protocol} (table)`,
      `ok    cache: ${cache} is writable`,
      `ok    state dir: ${stateDir} is private (0700)`,
    ]);
    expect(result.stdout).not.toMatch(/^FAIL/m);
    expect(processesReferring(box.root)).toEqual([]);
  });
});
