import { describe, expect, it } from 'vitest';
import type { PrepareServices } from '../../../core/adapter.js';
import type { InstallPackageOptions } from '../../../core/install/index.js';
import { resolveCli } from '../../../core/install/resolve-cli.js';

// A managed CLI whose platform package has a version of its own (Codex: `@openai/codex@0.171.0-linux-x64`).
function services(installed: InstallPackageOptions[], present = false): PrepareServices {
  return {
    installPackage: async (options) => {
      installed.push(options);
      return { dir: options.targetDir, binaryPath: `${options.targetDir}/${options.binPath}`, integrity: 'sha512-x', fromCache: false };
    },
    isInstalled: async () => present,
    readNpmConfig: async () => ({ registry: 'https://registry.example/', scoped: {}, auth: {} }) as never,
    runCommand: async () => ({ exitCode: 0, signal: null, stdout: 'tool-cli 0.171.0', stderr: '', timedOut: false, truncated: false }),
  };
}

const descriptor = {
  adapter: 'tool',
  executable: 'tool',
  platformPackage: () => '@scope/tool',
  binPath: 'vendor/bin/tool',
  parseVersion: (stdout: string) => /(\d+\.\d+\.\d+)/.exec(stdout)?.[1],
};
const cli = { source: 'managed' as const, version: '0.171.0', range: '>=0.171.0 <0.172.0' };

describe('resolveCli with a package version of its own', () => {
  it('installs the package version the descriptor names into the CLI version folder, and checks the CLI version', async () => {
    const installed: InstallPackageOptions[] = [];
    const located = await resolveCli(
      cli,
      { ...descriptor, packageVersion: (v) => `${v}-linux-x64` },
      { services: services(installed), cacheDir: '/cache', env: {} },
    );
    expect(installed.map((o) => [o.packageName, o.version, o.targetDir])).toEqual([
      ['@scope/tool', '0.171.0-linux-x64', '/cache/cli/tool/0.171.0'],
    ]);
    expect(located).toMatchObject({ version: '0.171.0', binaryPath: '/cache/cli/tool/0.171.0/vendor/bin/tool' });
  });

  it('without packageVersion the package version is the CLI version', async () => {
    const installed: InstallPackageOptions[] = [];
    await resolveCli(cli, descriptor, { services: services(installed), cacheDir: '/cache', env: {} });
    expect(installed[0]?.version).toBe('0.171.0');
  });

  it('with install: false, a missing package version is cli_not_found', async () => {
    const installed: InstallPackageOptions[] = [];
    await expect(
      resolveCli(
        cli,
        { ...descriptor, packageVersion: (v) => `${v}-linux-x64` },
        { services: services(installed), cacheDir: '/cache', env: {}, install: false },
      ),
    ).rejects.toMatchObject({ code: 'cli_not_found' });
    expect(installed).toEqual([]);
  });
});
