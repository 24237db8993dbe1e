import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLAUDE_CLI } from '../../../adapters/claude-code/versions.js';
import type { PrepareContext, PrepareServices } from '../../../core/adapter.js';
import { isOneWorksError } from '../../../core/errors.js';
import { createPrepareServices, type InstallPackageOptions, resolveCli, selectPlatformPackage } from '../../../core/install/index.js';
import { FAKE_CLI } from '../../support/fake-adapter.js';

// The one resolver takes everything that differs from the adapter's declaration: a CLI that is
// not droid (the fake's `fake 1.2.3` version line, its own executable name and version table).

let root: string;
let bin: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'ow-resolve-cli-'));
  bin = path.join(root, 'bin');
  await mkdir(bin);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function fakeAgent(prints: string): Promise<string> {
  const file = path.join(bin, 'fake-agent');
  await writeFile(file, `#!/bin/sh\necho "${prints}"\n`, { mode: 0o755 });
  return file;
}

function context(extra: Partial<PrepareContext> = {}): PrepareContext {
  const services = createPrepareServices();
  return { services, cacheDir: path.join(root, 'cache'), lock: new Map(), env: { PATH: `${bin}:/usr/bin:/bin` }, ...extra };
}

describe('resolveCli with a declaration that is not droid', () => {
  it("reads the version with the declaration's parser and fills the facts from its table", async () => {
    const binary = await fakeAgent('fake 1.4.2');
    const ctx = context();
    const resolved = await ctx.services.resolveCli({ source: 'path', path: binary, version: '1.4.0' }, FAKE_CLI, ctx);
    expect(resolved).toEqual({
      source: 'path',
      binaryPath: binary,
      version: '1.4.2',
      range: '>=1.4.0 <1.5.0',
      expected: { facts: { fakeVersion: '1.4.2' }, qualifiedBy: 'table' },
    });
  });

  it('finds the declared executable on PATH and takes facts from the lock for a version the table lacks', async () => {
    const binary = await fakeAgent('fake 2.0.1');
    const ctx = context({ lock: new Map([['2.0.1', { facts: { fakeVersion: '2.0.1' } }]]) });
    const resolved = await ctx.services.resolveCli({ source: 'system', version: '2.0.0' }, FAKE_CLI, ctx);
    expect(resolved.binaryPath).toBe(binary);
    expect(resolved.expected).toEqual({ facts: { fakeVersion: '2.0.1' }, qualifiedBy: 'lock' });
  });

  it('refuses output the parser does not read as probe_failed, named after the declaration', async () => {
    const binary = await fakeAgent('2.0.1 (Fake)');
    const ctx = context();
    const error = await ctx.services.resolveCli({ source: 'path', path: binary, version: '2.0.0' }, FAKE_CLI, ctx).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'probe_failed')).toBe(true);
    expect((error as Error).message).toBe(`fake at ${binary} printed no version for --version; it printed "2.0.1 (Fake)" on stdout`);
  });

  it('names the adapter in the range refusal', async () => {
    const binary = await fakeAgent('fake 1.3.0');
    const ctx = context();
    const error = await ctx.services.resolveCli({ source: 'path', path: binary, version: '1.4.0' }, FAKE_CLI, ctx).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'unsupported_cli_version')).toBe(true);
    expect((error as Error).message.split('\n')[0]).toBe(
      `fake at ${binary} is 1.3.0, outside the pinned range >=1.4.0 <1.5.0 (adapters.fake.cli.version 1.4.0)`,
    );
  });

  it('refuses a managed install on a platform the declaration has no package for', async () => {
    const ctx = context({ platform: { platform: 'linux', arch: 'x64', libc: 'glibc', hasAvx2: true } });
    const error = await ctx.services.resolveCli({ source: 'managed', version: '1.4.0' }, FAKE_CLI, ctx).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'unsupported_platform')).toBe(true);
    expect((error as Error).message).toContain('fake is not published for linux-x64');
  });
});

describe('platform packages of a CLI with musl builds (claude)', () => {
  it('takes the -musl package on a musl Linux and the plain one on glibc, for x64 and arm64', () => {
    const on = (arch: string, libc: 'glibc' | 'musl') =>
      selectPlatformPackage(CLAUDE_CLI, { platform: 'linux', arch, libc, hasAvx2: true });
    expect(on('x64', 'glibc')).toBe('@anthropic-ai/claude-code-linux-x64');
    expect(on('x64', 'musl')).toBe('@anthropic-ai/claude-code-linux-x64-musl');
    expect(on('arm64', 'glibc')).toBe('@anthropic-ai/claude-code-linux-arm64');
    expect(on('arm64', 'musl')).toBe('@anthropic-ai/claude-code-linux-arm64-musl');
  });
});

describe('resolveCli with a package version of its own (Codex: `@openai/codex@0.171.0-linux-x64`)', () => {
  // An installer that records what it was asked for, and a --version that prints `tool-cli 0.171.0`.
  function recordingContext(installed: InstallPackageOptions[], present = false): PrepareContext {
    const real = createPrepareServices();
    const services: PrepareServices = {
      ...real,
      installPackage: async (options) => {
        installed.push(options);
        return { dir: options.targetDir, binaryPath: `${options.targetDir}/${options.binPath}`, integrity: 'sha512-x', fromCache: false };
      },
      isInstalled: async () => present,
      runCommand: async () => ({ exitCode: 0, signal: null, stdout: 'tool-cli 0.171.0', stderr: '', timedOut: false, truncated: false }),
    };
    return {
      services,
      cacheDir: '/cache',
      lock: new Map(),
      env: {},
      registry: { registry: 'https://registry.example/', scopes: {}, authTokens: {} },
      platform: { platform: 'linux', arch: 'x64', libc: 'glibc', hasAvx2: true },
    };
  }
  const tool = {
    ...FAKE_CLI,
    adapter: 'tool',
    packages: { 'linux-x64': { name: '@scope/tool' } },
    binPath: () => 'vendor/bin/tool',
    parseVersion: (line: string) => /(\d+\.\d+\.\d+)/.exec(line)?.[1],
  };
  const selection = { source: 'managed' as const, version: '0.171.0' };

  it('installs the package version the declaration names into the CLI version folder, and checks the CLI version', async () => {
    const installed: InstallPackageOptions[] = [];
    const ctx = recordingContext(installed);
    const resolved = await resolveCli(selection, { ...tool, packageVersion: (v, t) => `${v}-${t.platform}-${t.arch}` }, ctx);
    expect(installed.map((o) => [o.packageName, o.version, o.targetDir])).toEqual([
      ['@scope/tool', '0.171.0-linux-x64', '/cache/cli/tool/0.171.0'],
    ]);
    expect(resolved).toMatchObject({ version: '0.171.0', binaryPath: '/cache/cli/tool/0.171.0/vendor/bin/tool' });
  });

  it('reads the npm config only when the installer downloads, not on a cache hit', async () => {
    let reads = 0;
    const run = async (download: boolean): Promise<void> => {
      const { registry: _given, ...base } = recordingContext([]);
      const services: PrepareServices = {
        ...base.services,
        readNpmConfig: async () => {
          reads += 1;
          return { registry: 'https://registry.example/', scopes: {}, authTokens: {} };
        },
        // As the real installer: the registry settings are needed for a download only.
        installPackage: async (options) => {
          if (download && typeof options.registry === 'function') await options.registry();
          return {
            dir: options.targetDir,
            binaryPath: `${options.targetDir}/${options.binPath}`,
            integrity: 'sha512-x',
            fromCache: !download,
          };
        },
      };
      await resolveCli(selection, tool, { ...base, services });
    };
    await run(false);
    expect(reads).toBe(0);
    await run(true);
    expect(reads).toBe(1);
  });

  it('without packageVersion the package version is the CLI version', async () => {
    const installed: InstallPackageOptions[] = [];
    await resolveCli(selection, tool, recordingContext(installed));
    expect(installed[0]?.version).toBe('0.171.0');
  });

  it('with install: false, a missing package version is cli_not_found', async () => {
    const installed: InstallPackageOptions[] = [];
    const ctx = { ...recordingContext(installed), install: false };
    await expect(resolveCli(selection, { ...tool, packageVersion: (v) => `${v}-linux-x64` }, ctx)).rejects.toMatchObject({
      code: 'cli_not_found',
    });
    expect(installed).toEqual([]);
  });
});
