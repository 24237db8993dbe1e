import { existsSync } from 'node:fs';
import semver from 'semver';
import { OneWorksError } from '../../core/errors.js';

/**
 * The qualified-version table of the Claude Code CLI and its npm platform packages. The native
 * binary is run directly from the platform package (`claude` at the package root, 2.1.333); the
 * wrapper `@anthropic-ai/claude-code` and its postinstall are never used.
 */

/** The protocol family the adapter speaks: the "API" of its version facts (Claude Code announces only its own version). */
export const CLAUDE_API = 'stream-json';

/** Version facts a CLI line is known to announce: `claude_code_version` on `system/init`. */
export interface ClaudeVersionFacts {
  /** The stream-json control protocol subtypes One Works relies on, observed for the line. */
  controlSubtypes: readonly string[];
}

const CONTROL_SUBTYPES = ['initialize', 'can_use_tool', 'interrupt', 'set_model', 'set_permission_mode'] as const;

/** Observed facts per CLI minor line. */
const FACTS_BY_MINOR: ReadonlyMap<string, ClaudeVersionFacts> = new Map([['2.1', { controlSubtypes: CONTROL_SUBTYPES }]]);

/** Platform packages by `<platform>-<arch>[-musl]`. */
const PLATFORM_PACKAGES: Readonly<Record<string, string>> = {
  'linux-x64': '@anthropic-ai/claude-code-linux-x64',
  'linux-x64-musl': '@anthropic-ai/claude-code-linux-x64-musl',
  'linux-arm64': '@anthropic-ai/claude-code-linux-arm64',
  'linux-arm64-musl': '@anthropic-ai/claude-code-linux-arm64-musl',
  'darwin-x64': '@anthropic-ai/claude-code-darwin-x64',
  'darwin-arm64': '@anthropic-ai/claude-code-darwin-arm64',
  'win32-x64': '@anthropic-ai/claude-code-win32-x64',
  'win32-arm64': '@anthropic-ai/claude-code-win32-arm64',
};

/** True on a musl libc Linux (Alpine): its dynamic loader is present. */
export function detectMusl(platform: NodeJS.Platform = process.platform, arch: string = process.arch): boolean {
  if (platform !== 'linux') return false;
  const loader = arch === 'arm64' ? '/lib/ld-musl-aarch64.so.1' : '/lib/ld-musl-x86_64.so.1';
  return existsSync(loader);
}

/** The npm package carrying the claude binary for a platform; `unsupported_platform` otherwise. */
export function claudePlatformPackage(platform: NodeJS.Platform, arch: string, musl: boolean): string {
  const key = `${platform}-${arch}${musl ? '-musl' : ''}`;
  const name = PLATFORM_PACKAGES[key];
  if (!name) {
    throw new OneWorksError(
      'unsupported_platform',
      `Claude Code is not published for ${key}; supported: ${Object.keys(PLATFORM_PACKAGES).join(', ')}. Use adapters.claude-code.cli.source: path`,
      { data: { platform, arch, musl } },
    );
  }
  return name;
}

/** The binary's path inside its platform package. */
export function claudeBinPath(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'claude.exe' : 'claude';
}

/** `2.1.333 (Claude Code)` → `2.1.333`. */
export function parseClaudeVersion(stdout: string): string | undefined {
  const match = /^\s*v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(stdout);
  return match?.[1] && semver.valid(match[1]) ? match[1] : undefined;
}

/** The facts of a version: the table's entry for its minor line (release versions only). */
export function lookupClaudeVersion(version: string): ClaudeVersionFacts | undefined {
  const parsed = semver.parse(version);
  if (!parsed || parsed.prerelease.length > 0) return undefined;
  return FACTS_BY_MINOR.get(`${parsed.major}.${parsed.minor}`);
}
