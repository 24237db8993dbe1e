import type { CliDescriptor } from '../../core/adapter.js';
import { lookupDroidFacts } from './versions.js';

/**
 * What the droid adapter declares about its CLI; core's one resolver
 * (`PrepareServices.resolveCli`) finds, installs and checks the binary from it.
 */
export const DROID_CLI: CliDescriptor = {
  adapter: 'droid',
  displayName: 'droid',
  executable: 'droid',
  // As the `@factory/cli` wrapper maps them (its platform.js, 0.225.1): x64 has a baseline build
  // for CPUs without AVX2; there are no musl builds, so a musl Linux gets the plain one.
  packages: {
    'darwin-arm64': { name: '@factory/cli-darwin-arm64' },
    'darwin-x64': { name: '@factory/cli-darwin-x64', baseline: '@factory/cli-darwin-x64-baseline' },
    'linux-arm64': { name: '@factory/cli-linux-arm64' },
    'linux-x64': { name: '@factory/cli-linux-x64', baseline: '@factory/cli-linux-x64-baseline' },
    'win32-arm64': { name: '@factory/cli-win32-arm64' },
    'win32-x64': { name: '@factory/cli-win32-x64', baseline: '@factory/cli-win32-x64-baseline' },
  },
  binPath: (platform) => (platform === 'win32' ? 'bin/droid.exe' : 'bin/droid'),
  parseVersion: parseDroidVersion,
  versionFacts: lookupDroidFacts,
};

/** droid prints a bare `0.225.2`; a `droid 0.225.2` or `v0.225.2` style is tolerated. */
export function parseDroidVersion(line: string): string | undefined {
  return /(?:^|\s|v)(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\s|$)/.exec(line.trim())?.[1];
}
