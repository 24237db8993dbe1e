import semver from 'semver';
import type { CliDescriptor, ResolvedCli, VersionFacts } from '../../core/adapter.js';

/**
 * The qualified-version table of the Claude Code CLI and its npm platform packages. The native
 * binary is run directly from the platform package (`claude` at the package root, 2.1.333); the
 * wrapper `@anthropic-ai/claude-code` and its postinstall are never used.
 */

/** Version facts a CLI line is known to announce: `claude_code_version` on `system/init`. */
export interface ClaudeVersionFacts {
  /** The stream-json control protocol subtypes One Works relies on, observed for the line. */
  controlSubtypes: readonly string[];
}

const CONTROL_SUBTYPES = ['initialize', 'can_use_tool', 'interrupt', 'set_model', 'set_permission_mode'] as const;

/** Observed facts per CLI minor line. */
const FACTS_BY_MINOR: ReadonlyMap<string, ClaudeVersionFacts> = new Map([['2.1', { controlSubtypes: CONTROL_SUBTYPES }]]);

/** What the adapter declares about the claude CLI; core's resolver finds, installs and checks it. */
export const CLAUDE_CLI: CliDescriptor = {
  adapter: 'claude-code',
  displayName: 'claude',
  executable: 'claude',
  packages: {
    'linux-x64': { name: '@anthropic-ai/claude-code-linux-x64' },
    'linux-x64-musl': { name: '@anthropic-ai/claude-code-linux-x64-musl' },
    'linux-arm64': { name: '@anthropic-ai/claude-code-linux-arm64' },
    'linux-arm64-musl': { name: '@anthropic-ai/claude-code-linux-arm64-musl' },
    'darwin-x64': { name: '@anthropic-ai/claude-code-darwin-x64' },
    'darwin-arm64': { name: '@anthropic-ai/claude-code-darwin-arm64' },
    'win32-x64': { name: '@anthropic-ai/claude-code-win32-x64' },
    'win32-arm64': { name: '@anthropic-ai/claude-code-win32-arm64' },
  },
  binPath: (platform) => (platform === 'win32' ? 'claude.exe' : 'claude'),
  parseVersion: parseClaudeVersion,
  versionFacts: (version) => (lookupClaudeVersion(version) ? { claudeCodeVersion: version } : undefined),
};

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

/**
 * Claude Code's version facts are what it announces: `claude_code_version` (on `system/init` and
 * in the `initialize` answer), as `claudeCodeVersion`. It must be the version the binary printed
 * for `--version`, and the recorded one when the version is qualified.
 */
export function checkClaudeFacts(announced: VersionFacts, expected: ResolvedCli['expected'], cliVersion: string): string[] {
  const version = announced.claudeCodeVersion;
  if (!version || !semver.valid(version)) return [`claude_code_version ${JSON.stringify(version ?? null)} is missing or malformed`];
  if (version !== cliVersion) return [`claude_code_version ${version}, but the binary printed ${cliVersion} for --version`];
  const recorded = expected?.facts.claudeCodeVersion;
  if (expected && recorded !== version) {
    return [
      `claude_code_version ${version}, but the ${expected.qualifiedBy === 'table' ? 'built-in table' : 'lock file'} records ${recorded ?? '(none)'} for ${cliVersion}`,
    ];
  }
  return [];
}
