import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import ssri from 'ssri';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DROID_CLI } from '../../adapters/droid/cli-source.js';
import { detectPlatform, selectPlatformPackage } from '../../core/install/index.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, STACK_LINE, type CliSandbox } from '../support/cli-runner.js';
import { buildTarball, fakeBinaryFiles, startRegistryStub, type RegistryStub, type StubVersion } from '../support/registry-stub.js';

// The installer picks the regular or the -baseline build by AVX2; the stub serves both.
const SERVED_PACKAGES = ['@factory/cli-linux-x64', '@factory/cli-linux-x64-baseline'];
const PACKAGE = selectPlatformPackage(DROID_CLI, detectPlatform());

let box: CliSandbox;
let stub: RegistryStub | undefined;
let cacheDir: string;

beforeEach(async () => {
  box = await createCliSandbox();
  cacheDir = join(box.root, 'cache');
  await box.writeConfig(['cache:', `  directory: ${cacheDir}`, ''].join('\n'));
});
afterEach(async () => {
  await stub?.close();
  stub = undefined;
  await box.remove();
});

// Starts the stub publishing droid 0.225.2 under every served name; `serve` picks the bytes.
async function startStub(serve: (name: string) => Promise<StubVersion>): Promise<RegistryStub> {
  const names = [...new Set([...SERVED_PACKAGES, PACKAGE])];
  const packages: Record<string, Record<string, StubVersion>> = {};
  for (const name of names) packages[name] = { '0.225.2': await serve(name) };
  stub = await startRegistryStub({ packages });
  return stub;
}

const fakePlatformPackage = async (name: string): Promise<StubVersion> => ({
  tarball: await buildTarball(fakeBinaryFiles({ name, version: '0.225.2', paddingBytes: 64 * 1024 })),
});

const versionEntries = async (): Promise<string[]> =>
  (await readdir(join(cacheDir, 'cli', 'droid')).catch(() => [] as string[])).filter((name) => name.startsWith('0.225.2'));

describe('managed droid that is not installed', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('list, which and doctor say how to install it and make no registry request', async () => {
    const registry = await startStub(fakePlatformPackage);
    const env = { npm_config_registry: registry.url };
    const hint = `managed droid 0.225.2 is not installed in ${cacheDir}; run \`one-works adapters install droid\``;

    const list = await box.run(['adapters', 'list'], env);
    expect(list.exitCode).toBe(4);
    expect(list.stdout).toMatch(/^droid {2}managed {2}0\.225\.2 {2}not usable: /);
    expect(list.stdout).toContain(hint);

    const which = await box.run(['adapters', 'which'], env);
    expect(which.exitCode).toBe(4);
    expect(which.stderr).toContain(hint);

    const doctor = await box.run(['doctor'], env);
    expect(doctor.exitCode).toBe(4);
    expect(doctor.stdout).toContain(`FAIL  droid binary: ${hint}`);

    expect(registry.requests).toEqual([]);
    expect(await versionEntries()).toEqual([]);
  });
});

describe('adapters install against a registry', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('downloads once, then reports the install as already there without a request', async () => {
    const registry = await startStub(fakePlatformPackage);
    const env = { npm_config_registry: registry.url };
    const binary = join(cacheDir, 'cli', 'droid', '0.225.2', 'bin', 'droid');

    const first = await box.run(['adapters', 'install'], env);
    expect(first.exitCode).toBe(0);
    expect(first.stdout).toMatch(new RegExp(`^droid 0\\.225\\.2 \\(managed\\) installed in \\d+\\.\\ds: ${binary}$`));
    expect(first.stderr).toContain(`resolving ${PACKAGE}@0.225.2 on ${new URL(registry.url).host}`);
    expect(registry.requests.map((r) => r.path)).toEqual([`/${PACKAGE}`, `/${PACKAGE}/-/${PACKAGE.split('/')[1]}-0.225.2.tgz`]);
    expect(await versionEntries()).toEqual(['0.225.2']);

    const second = await box.run(['adapters', 'install', 'droid'], env);
    expect(second.exitCode).toBe(0);
    expect(second.stdout).toBe(`droid 0.225.2 (managed) already installed: ${binary}`);
    expect(registry.requests).toHaveLength(2);

    const which = await box.run(['adapters', 'which'], env);
    expect(which.exitCode).toBe(0);
    expect(which.stdout).toBe(binary);
    expect(registry.requests).toHaveLength(2);
  });

  it('prints one JSON object with --json, with the verified integrity', async () => {
    const served = new Map<string, Buffer>();
    const registry = await startStub(async (name) => {
      const published = await fakePlatformPackage(name);
      served.set(name, published.tarball);
      return published;
    });
    const env = { npm_config_registry: registry.url };
    const integrity = ssri.fromData(served.get(PACKAGE)!, { algorithms: ['sha512'] }).toString();

    const first = await box.run(['--json', 'adapters', 'install'], env);
    expect(first.exitCode).toBe(0);
    expect(first.stdout.split('\n')).toHaveLength(1);
    expect(JSON.parse(first.stdout)).toMatchObject({
      adapter: 'droid',
      source: 'managed',
      path: join(cacheDir, 'cli', 'droid', '0.225.2', 'bin', 'droid'),
      version: '0.225.2',
      range: '>=0.225.0 <0.226.0',
      facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' },
      status: 'qualified',
      integrity,
      fromCache: false,
    });

    const second = await box.run(['--json', 'adapters', 'install'], env);
    expect(second.exitCode).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ integrity, fromCache: true });
    expect(registry.requests).toHaveLength(2);
  });

  it('refuses a tampered tarball with exit 4 and leaves no version directory behind', async () => {
    const registry = await startStub(async (name) => {
      const original = await buildTarball(fakeBinaryFiles({ name, version: '0.225.2' }));
      const tampered = await buildTarball(fakeBinaryFiles({ name, version: '0.225.2', prints: '0.225.2; echo pwned' }));
      return { tarball: tampered, integrity: ssri.fromData(original, { algorithms: ['sha512'] }).toString() };
    });
    const result = await box.run(['adapters', 'install'], { npm_config_registry: registry.url });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toMatch(
      new RegExp(`one-works: ${PACKAGE}@0\\.225\\.2 failed its integrity check: expected sha512-\\S+, got sha512-\\S+`),
    );
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(registry.requests.some((r) => r.path.endsWith('.tgz'))).toBe(true);
    expect(await versionEntries()).toEqual([]);

    const list = await box.run(['adapters', 'list'], { npm_config_registry: registry.url });
    expect(list.exitCode).toBe(4);
    expect(list.stdout).toContain('managed droid 0.225.2 is not installed');
  });

  it('refuses a package that declares runtime dependencies with install_has_dependencies, exit 4, before any download', async () => {
    const registry = await startStub(async (name) => ({
      ...(await fakePlatformPackage(name)),
      dependencies: { '@factory/runtime': '^1.0.0', 'left-pad': '1.3.0' },
    }));
    const env = { npm_config_registry: registry.url };
    const result = await box.run(['adapters', 'install', 'droid'], env);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(
      `one-works: ${PACKAGE}@0.225.2 declares runtime dependencies (@factory/runtime@^1.0.0, left-pad@1.3.0); `,
    );
    expect(result.stderr).not.toMatch(STACK_LINE);
    // Refused on the packument: the tarball was never fetched, nothing was installed.
    expect(registry.requests.map((r) => r.path)).toEqual([`/${PACKAGE}`]);
    expect(await versionEntries()).toEqual([]);
    // The message says what to do instead.
    expect(result.stderr).toContain('Pin a version without dependencies, or use cli.source: system or path');
  });

  it('exits 4 when the pinned version is not published', async () => {
    const registry = await startStub(fakePlatformPackage);
    await box.writeConfig(
      ['cache:', `  directory: ${cacheDir}`, 'adapters:', '  droid:', '    cli:', '      version: 0.225.9', ''].join('\n'),
    );
    const result = await box.run(['adapters', 'install'], { npm_config_registry: registry.url });
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain(`one-works: ${PACKAGE}@0.225.9 is not published; nearest published: 0.225.2`);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(await readdir(join(cacheDir, 'cli', 'droid')).catch(() => [])).toEqual([]);
  });
});
