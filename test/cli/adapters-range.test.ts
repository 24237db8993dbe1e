import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';

const RANGE = '>=0.225.0 <0.226.0';

let box: CliSandbox;

beforeEach(async () => {
  box = await createCliSandbox();
});
afterEach(async () => {
  await box.remove();
});

// A stand-in droid: a shell script that prints `version` for --version (and for anything else).
async function fakeDroid(dirName: string, version: string): Promise<string> {
  const dir = join(box.root, dirName);
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'droid');
  await writeFile(file, `#!/bin/sh\necho ${version}\n`);
  await chmod(file, 0o755);
  return file;
}

function pathConfig(binary: string, extra: string[] = []): string {
  return ['adapters:', '  droid:', '    cli:', '      source: path', `      path: ${binary}`, '      version: 0.225.2', ...extra, ''].join(
    '\n',
  );
}

function expectRangeRefusal(text: string, binary: string): void {
  expect(text).toContain(`droid at ${binary} is 0.215.0, outside the pinned range ${RANGE} (adapters.droid.cli.version 0.225.2)`);
}

describe('adapters which/list with source: path', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('refuses a binary outside the pinned range, naming it, its version and the range', async () => {
    const binary = await fakeDroid('old', '0.215.0');
    await box.writeConfig(pathConfig(binary));
    const which = await box.run(['adapters', 'which']);
    expect(which.exitCode).toBe(4);
    expect(which.stdout).toBe('');
    expectRangeRefusal(which.stderr, binary);
    expect(which.stderr).not.toMatch(STACK_LINE);

    const list = await box.run(['adapters', 'list']);
    expect(list.exitCode).toBe(4);
    expect(list.stdout).toMatch(/^droid {2}path {2}0\.225\.2 {2}not usable: /);
    expectRangeRefusal(list.stdout, binary);
  });

  it('reports the problem as JSON with --json list', async () => {
    const binary = await fakeDroid('old', '0.215.0');
    await box.writeConfig(pathConfig(binary));
    const list = await box.run(['--json', 'adapters', 'list']);
    expect(list.exitCode).toBe(4);
    const lines = list.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, string>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ adapter: 'droid', source: 'path', version: '0.225.2' });
    expectRangeRefusal(lines[0]!.error!, binary);
  });

  it('names cli.range in the refusal when the range is written explicitly', async () => {
    const binary = await fakeDroid('old', '0.215.0');
    await box.writeConfig(pathConfig(binary, ['      range: ">=0.225.1 <0.226.0"']));
    const which = await box.run(['adapters', 'which']);
    expect(which.exitCode).toBe(4);
    expect(which.stderr).toContain(
      `droid at ${binary} is 0.215.0, outside the pinned range >=0.225.1 <0.226.0 (adapters.droid.cli.range >=0.225.1 <0.226.0)`,
    );
  });

  it('prints the path of a binary inside the range and lists it as qualified', async () => {
    const binary = await fakeDroid('current', '0.225.7');
    await box.writeConfig(pathConfig(binary));
    const which = await box.run(['adapters', 'which']);
    expect(which.exitCode).toBe(0);
    expect(which.stdout).toBe(binary);

    const list = await box.run(['--json', 'adapters', 'list']);
    expect(list.exitCode).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual({
      adapter: 'droid',
      source: 'path',
      path: binary,
      version: '0.225.7',
      range: RANGE,
      facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' },
      status: 'qualified',
    });
  });

  it('reads a lock file written before version facts (lockfileVersion 1) and lists its version as probed', async () => {
    const binary = await fakeDroid('older', '0.224.0');
    await box.writeConfig(pathConfig(binary, ['      range: ">=0.224.0 <0.226.0"']));
    await writeFile(
      join(dirname(box.configPath), 'one-works.lock'),
      await readFile(new URL('../fixtures/lock/one-works.v1.lock', import.meta.url)),
    );
    const list = await box.run(['--json', 'adapters', 'list']);
    expect(list.exitCode).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({
      version: '0.224.0',
      facts: { apiVersion: '1.0.0', protocolVersion: '1.219.0' },
      status: 'probed',
    });
  });

  it('exits 4 with a not-found message when the path does not exist', async () => {
    const missing = join(box.root, 'nowhere', 'droid');
    await box.writeConfig(pathConfig(missing));
    const which = await box.run(['adapters', 'which']);
    expect(which.exitCode).toBe(4);
    expect(which.stderr).toContain(`droid at ${missing} does not exist (adapters.droid.cli.path); fix the path or use source: managed`);
    expect(which.stderr).not.toMatch(STACK_LINE);

    const list = await box.run(['adapters', 'list']);
    expect(list.exitCode).toBe(4);
    expect(list.stdout).toContain(`not usable: droid at ${missing} does not exist`);
  });

  it('exits 4 when the path is not executable', async () => {
    const binary = await fakeDroid('noexec', '0.225.2');
    await chmod(binary, 0o644);
    await box.writeConfig(pathConfig(binary));
    const which = await box.run(['adapters', 'which']);
    expect(which.exitCode).toBe(4);
    expect(which.stderr).toContain(`droid at ${binary} is not an executable file`);
  });
});

describe('adapters which/list with source: system', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  const systemConfig = ['adapters:', '  droid:', '    cli:', '      source: system', ''].join('\n');

  it('refuses the droid found on PATH when it is outside the pinned range', async () => {
    const binary = await fakeDroid('bin', '0.215.0');
    await box.writeConfig(systemConfig);
    const PATH = `${join(box.root, 'bin')}:${box.env.PATH}`;
    const which = await box.run(['adapters', 'which'], { PATH });
    expect(which.exitCode).toBe(4);
    expectRangeRefusal(which.stderr, binary);

    const list = await box.run(['adapters', 'list'], { PATH });
    expect(list.exitCode).toBe(4);
    expect(list.stdout).toMatch(/^droid {2}system {2}0\.225\.2 {2}not usable: /);
    expectRangeRefusal(list.stdout, binary);
  });

  it('takes the first droid on PATH', async () => {
    const first = await fakeDroid('first', '0.225.3');
    await fakeDroid('second', '0.215.0');
    await box.writeConfig(systemConfig);
    const which = await box.run(['adapters', 'which'], { PATH: `${join(box.root, 'first')}:${join(box.root, 'second')}:${box.env.PATH}` });
    expect(which.exitCode).toBe(0);
    expect(which.stdout).toBe(first);
  });

  it('exits 4 when no droid is on PATH', async () => {
    await box.writeConfig(systemConfig);
    const which = await box.run(['adapters', 'which'], { PATH: join(box.root, 'empty') });
    expect(which.exitCode).toBe(4);
    expect(which.stderr).toContain('droid was not found on PATH (1 directories searched)');
  });
});
