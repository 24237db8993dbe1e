import { readFileSync } from 'node:fs';
import semver from 'semver';
import { OneWorksError } from '../../core/errors.js';

/**
 * The qualified-version table of the droid CLI: which Factory API and stream-jsonrpc protocol
 * versions each CLI line speaks, and which npm platform packages carry the binary.
 */

/** The droid CLI version One Works installs when the config names none. */
export const DEFAULT_PIN = '0.225.2';

/** Protocol facts recorded for a CLI version. */
export interface ProtocolFacts {
  apiVersion: string;
  protocolVersion: string;
}

/** Observed protocol facts per CLI minor line (`major.minor`). */
const PROTOCOL_BY_MINOR: ReadonlyMap<string, ProtocolFacts> = new Map([
  ['0.225', { apiVersion: '1.0.0', protocolVersion: '1.220.0' }],
  ['0.215', { apiVersion: '1.0.0', protocolVersion: '1.206.0' }],
]);

/** The protocol sent on probe frames when the table knows nothing of a version: the default pin's. */
export const DEFAULT_PROTOCOL_FOR_PROBE: string = PROTOCOL_BY_MINOR.get('0.225')?.protocolVersion ?? '1.220.0';

/**
 * Platform packages by `<platform>-<arch>`, as the `@factory/cli` wrapper maps them (its
 * platform.js, 0.225.1): x64 has a baseline build for CPUs without AVX2.
 */
const PLATFORM_PACKAGES: Readonly<Record<string, { regular: string; baseline?: string }>> = {
  'darwin-arm64': { regular: '@factory/cli-darwin-arm64' },
  'darwin-x64': { regular: '@factory/cli-darwin-x64', baseline: '@factory/cli-darwin-x64-baseline' },
  'linux-arm64': { regular: '@factory/cli-linux-arm64' },
  'linux-x64': { regular: '@factory/cli-linux-x64', baseline: '@factory/cli-linux-x64-baseline' },
  'win32-arm64': { regular: '@factory/cli-win32-arm64' },
  'win32-x64': { regular: '@factory/cli-win32-x64', baseline: '@factory/cli-win32-x64-baseline' },
};

/** Platform package versions seen in the registry and qualified by conformance runs. */
export const KNOWN_PACKAGE_VERSIONS: Readonly<Record<string, readonly string[]>> = {
  '@factory/cli-linux-x64': ['0.215.0', '0.225.2'],
  '@factory/cli-linux-x64-baseline': ['0.225.2'],
};

/** What decides the platform package. */
export interface PlatformFacts {
  platform: NodeJS.Platform;
  arch: string;
  /** False only when AVX2 is known to be missing; undefined (unknown) picks the regular build, as the wrapper does. */
  hasAvx2: boolean | undefined;
}

/**
 * The npm package carrying the droid binary for a platform, e.g. `@factory/cli-linux-x64`, or
 * its `-baseline` variant when the CPU lacks AVX2. Throws `unsupported_platform` otherwise.
 */
export function platformPackage(facts: PlatformFacts): string {
  const key = `${facts.platform}-${facts.arch}`;
  const entry = PLATFORM_PACKAGES[key];
  if (!entry) {
    throw new OneWorksError(
      'unsupported_platform',
      `droid is not published for ${key}; supported: ${Object.keys(PLATFORM_PACKAGES).join(', ')}. Use adapters.droid.cli.source: path with a binary built for this machine`,
      { data: { platform: facts.platform, arch: facts.arch } },
    );
  }
  return facts.hasAvx2 === false && entry.baseline ? entry.baseline : entry.regular;
}

/** The binary's path inside its platform package. */
export function droidBinPath(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'bin/droid.exe' : 'bin/droid';
}

/**
 * Whether the CPU has AVX2, from the `flags` lines of /proc/cpuinfo on Linux. Undefined on
 * other systems or when the file cannot be read (finding out there would need a child process).
 */
export function detectAvx2(platform: NodeJS.Platform = process.platform, cpuinfo?: string): boolean | undefined {
  if (platform !== 'linux') return undefined;
  let text = cpuinfo;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return undefined;
    }
  }
  const flagLines = text.split('\n').filter((line) => /^flags\s*:/.test(line));
  if (flagLines.length === 0) return undefined;
  return flagLines.every((line) => line.split(':')[1]?.trim().split(/\s+/).includes('avx2'));
}

/**
 * Protocol facts for a CLI version: the table's entry for its minor line (release versions
 * only), else the project's lock entry for exactly that version, else undefined (unqualified).
 */
export function lookupVersion(
  version: string,
  lock?: ReadonlyMap<string, ProtocolFacts>,
): (ProtocolFacts & { qualifiedBy: 'table' | 'lock' }) | undefined {
  const parsed = semver.parse(version);
  if (!parsed) return undefined;
  const table = parsed.prerelease.length === 0 ? PROTOCOL_BY_MINOR.get(`${parsed.major}.${parsed.minor}`) : undefined;
  if (table) return { ...table, qualifiedBy: 'table' };
  const locked = lock?.get(version);
  if (locked) return { apiVersion: locked.apiVersion, protocolVersion: locked.protocolVersion, qualifiedBy: 'lock' };
  return undefined;
}
