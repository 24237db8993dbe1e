import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DROID_CLI } from '../../adapters/droid/cli-source.js';
import { detectPlatform, selectPlatformPackage } from '../../core/install/index.js';
import { conformanceValue, createCliSandbox, processesReferring, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';
import { buildTarball, fakeBinaryFiles, startRegistryStub, type RegistryStub, type StubVersion } from '../support/registry-stub.js';

const PACKAGE = selectPlatformPackage(DROID_CLI, detectPlatform());

let box: CliSandbox;
let stub: RegistryStub | undefined;

beforeEach(async () => {
  box = await createCliSandbox({ prefix: 'ow-cli-upgrade-' });
});
afterEach(async () => {
  await stub?.close();
  stub = undefined;
  await box.remove();
});

const cache = (): string => conformanceValue('ONE_WORKS_TEST_CACHE');
const lockPath = (): string => join(box.cwd, 'one-works.lock');

// A commented config pinned at 0.215.0; `range` adds an explicit cli.range line.
function pinnedConfig(range?: string): string {
  return [
    '# One Works project config (hand-written; comments must survive an upgrade)',
    'cache:',
    `  directory: ${cache()}   # the conformance cache`,
    '',
    'adapters:',
    '  droid:',
    '    # which droid to run',
    '    cli:',
    '      source: managed',
    '      version: 0.215.0    # pinned by hand',
    ...(range === undefined ? [] : [`      range: "${range}"  # explicit`]),
    '    effort: medium',
    '',
  ].join('\n');
}

async function installMarker(version: string): Promise<{ package: string; integrity: string }> {
  return JSON.parse(await readFile(join(cache(), 'cli', 'droid', version, '.one-works-install.json'), 'utf8')) as {
    package: string;
    integrity: string;
  };
}

describe('adapters upgrade droid', () => {
  it('rewrites only the version scalar and records the probe in one-works.lock', async () => {
    const before = pinnedConfig();
    await box.writeConfig(before);
    const result = await box.run(['adapters', 'upgrade', 'droid', '0.225.2']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe('droid upgraded 0.215.0 → 0.225.2 (apiVersion 1.0.0, protocolVersion 1.220.0)');

    const after = await readFile(box.configPath, 'utf8');
    expect(before.split('0.215.0')).toHaveLength(2);
    expect(after).toBe(before.replace('version: 0.215.0 ', 'version: 0.225.2 '));

    const lock = JSON.parse(await readFile(lockPath(), 'utf8')) as {
      lockfileVersion: number;
      adapters: Record<string, Record<string, Record<string, unknown>>>;
    };
    const marker = await installMarker('0.225.2');
    expect(lock.lockfileVersion).toBe(2);
    expect(Object.keys(lock.adapters)).toEqual(['droid']);
    expect(Object.keys(lock.adapters.droid ?? {})).toEqual(['0.225.2']);
    const entry = lock.adapters.droid?.['0.225.2'];
    expect(entry).toEqual({
      facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' },
      integrity: marker.integrity,
      package: PACKAGE,
      probedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(entry?.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    expect(marker.package).toBe(PACKAGE);
    expect(processesReferring(box.root)).toEqual([]);

    const list = await box.run(['--json', 'adapters', 'list']);
    expect(list.exitCode).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject({
      version: '0.225.2',
      range: '>=0.225.0 <0.226.0',
      facts: { protocolVersion: '1.220.0' },
    });
  });

  it('moves an explicit range that excludes the new pin to the new minor line', async () => {
    const before = pinnedConfig('>=0.215.0 <0.216.0');
    await box.writeConfig(before);
    const result = await box.run(['adapters', 'upgrade', 'droid', '0.225.2']);
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toContain('(range set to >=0.225.0 <0.226.0: the old one excluded the new pin)');
    const after = await readFile(box.configPath, 'utf8');
    expect(after).toBe(
      before.replace('version: 0.215.0 ', 'version: 0.225.2 ').replace('range: ">=0.215.0 <0.216.0"', 'range: ">=0.225.0 <0.226.0"'),
    );
  });

  it('keeps an explicit range that admits the new pin', async () => {
    const before = pinnedConfig('>=0.215.0 <0.226.0');
    await box.writeConfig(before);
    const result = await box.run(['adapters', 'upgrade', 'droid', '0.225.2']);
    expect(result.exitCode).toBe(0);
    expect(await readFile(box.configPath, 'utf8')).toBe(before.replace('version: 0.215.0 ', 'version: 0.225.2 '));
  });

  it('changes neither the YAML nor the lock when the version is not published', async () => {
    await box.writeConfig(pinnedConfig());
    expect((await box.run(['adapters', 'upgrade', 'droid', '0.225.2'])).exitCode).toBe(0);
    const [yamlBefore, lockBefore] = await Promise.all([readFile(box.configPath, 'utf8'), readFile(lockPath(), 'utf8')]);

    // A registry that publishes the two qualified versions only (offline: no real registry needed).
    const published = async (name: string): Promise<Record<string, StubVersion>> => ({
      '0.215.0': { tarball: await buildTarball(fakeBinaryFiles({ name, version: '0.215.0' })) },
      '0.225.2': { tarball: await buildTarball(fakeBinaryFiles({ name, version: '0.225.2' })) },
    });
    const names = [...new Set(['@factory/cli-linux-x64', '@factory/cli-linux-x64-baseline', PACKAGE])];
    stub = await startRegistryStub({
      packages: Object.fromEntries(await Promise.all(names.map(async (n) => [n, await published(n)] as const))),
    });

    const result = await box.run(['adapters', 'upgrade', 'droid', '0.999.0'], { npm_config_registry: stub.url });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(`one-works: ${PACKAGE}@0.999.0 is not published; nearest published: 0.225.2, 0.215.0`);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(stub.requests.map((r) => r.path)).toEqual([`/${PACKAGE}`]);
    expect(await readFile(box.configPath, 'utf8')).toBe(yamlBefore);
    expect(await readFile(lockPath(), 'utf8')).toBe(lockBefore);
    expect((await readdir(join(cache(), 'cli', 'droid'))).filter((name) => name.startsWith('0.999.0'))).toEqual([]);
  });

  it('refuses a version that is not exact without touching anything', async () => {
    const before = pinnedConfig();
    await box.writeConfig(before);
    const result = await box.run(['adapters', 'upgrade', 'droid', '^0.225.0']);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toBe('one-works: "^0.225.0" is not an exact version (e.g. 0.225.2)');
    expect(await readFile(box.configPath, 'utf8')).toBe(before);
    expect(await readdir(box.cwd)).toEqual(['one-works.yaml']);
  });
});
