import { existsSync } from 'node:fs';
import semver from 'semver';
import type { CliDescriptor, ResolvedCli, VersionFacts } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';

/**
 * The qualified-version table of the Codex CLI and its npm platform packages. `@openai/codex`
 * publishes each platform's native binary under its own name with a platform prerelease version
 * (`0.171.0-linux-x64`); the binary sits at `vendor/<target triple>/bin/codex`, next to its
 * helpers (`codex-code-mode-host`, a vendored `bwrap`, `rg` under `codex-path/`), whose file
 * modes the managed install keeps. The wrapper `@openai/codex` (a JS launcher) is never used.
 */

/** The protocol family of the adapter's version facts: the app-server's JSON-RPC over stdio. */
export const CODEX_API = 'app-server';

/** Version facts a CLI line is known to have (observed with the generated schemas, adapters/codex/generated). */
export interface CodexVersionFacts {
  /** The app-server methods One Works calls, all present in the line's `generate-ts` output. */
  methods: readonly string[];
  /** `turn/steer` exists (steering a live turn). */
  steer: boolean;
}

const FACTS_BY_MINOR: ReadonlyMap<string, CodexVersionFacts> = new Map([
  [
    '0.171',
    {
      methods: ['initialize', 'thread/start', 'thread/resume', 'turn/start', 'turn/interrupt', 'turn/steer', 'model/list'],
      steer: true,
    },
  ],
]);

/** npm platform suffix and Rust target triple by `<platform>-<arch>` (Linux builds are musl, static). */
const PLATFORMS: Readonly<Record<string, { suffix: string; triple: string }>> = {
  'linux-x64': { suffix: 'linux-x64', triple: 'x86_64-unknown-linux-musl' },
  'linux-arm64': { suffix: 'linux-arm64', triple: 'aarch64-unknown-linux-musl' },
  'darwin-x64': { suffix: 'darwin-x64', triple: 'x86_64-apple-darwin' },
  'darwin-arm64': { suffix: 'darwin-arm64', triple: 'aarch64-apple-darwin' },
  'win32-x64': { suffix: 'win32-x64', triple: 'x86_64-pc-windows-msvc' },
  'win32-arm64': { suffix: 'win32-arm64', triple: 'aarch64-pc-windows-msvc' },
};

/** The npm package carrying the binaries (every platform: the same name, a platform prerelease version). */
export const CODEX_PACKAGE = '@openai/codex';

function platformOf(platform: NodeJS.Platform, arch: string): { suffix: string; triple: string } {
  const key = `${platform}-${arch}`;
  const entry = PLATFORMS[key];
  if (!entry) {
    throw new OneWorksError(
      'unsupported_platform',
      `Codex is not published for ${key}; supported: ${Object.keys(PLATFORMS).join(', ')}. Use adapters.codex.cli.source: path`,
      { data: { platform, arch } },
    );
  }
  return entry;
}

/** The version of the platform package carrying CLI `version`: `0.171.0` → `0.171.0-linux-x64`. */
export function codexPackageVersion(version: string, platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  return `${version}-${platformOf(platform, arch).suffix}`;
}

/** The binary's path inside its platform package. */
export function codexBinPath(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  return `vendor/${platformOf(platform, arch).triple}/bin/codex${platform === 'win32' ? '.exe' : ''}`;
}

/**
 * The package's helper PATH directory (`vendor/<triple>/codex-path`, holding `rg`) for a binary
 * at `vendor/<triple>/bin/codex`, when it exists; the JS launcher puts it on PATH, so One Works does.
 */
export function codexHelperPathDir(binaryPath: string): string | undefined {
  const dir = `${binaryPath.replace(/[\\/]bin[\\/][^\\/]+$/, '')}/codex-path`;
  return dir !== `${binaryPath}/codex-path` && existsSync(dir) ? dir : undefined;
}

/** `codex-cli 0.171.0` → `0.171.0`. */
export function parseCodexVersion(stdout: string): string | undefined {
  const match = /^\s*codex(?:-cli)?\s+v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/m.exec(stdout);
  return match?.[1] && semver.valid(match[1]) ? match[1] : undefined;
}

/** The facts of a version: the table's entry for its minor line (release versions only). */
export function lookupCodexVersion(version: string): CodexVersionFacts | undefined {
  const parsed = semver.parse(version);
  if (!parsed || parsed.prerelease.length > 0) return undefined;
  return FACTS_BY_MINOR.get(`${parsed.major}.${parsed.minor}`);
}

/**
 * What the adapter declares about the codex CLI: one package name (`@openai/codex`) whose
 * platform builds are prerelease versions (`0.171.0-linux-x64`, static musl builds on Linux), the
 * binary under `vendor/<target triple>/bin/`. Core's resolver finds, installs and checks it.
 */
export const CODEX_CLI: CliDescriptor = {
  adapter: 'codex',
  displayName: 'codex',
  executable: 'codex',
  packages: Object.fromEntries(Object.keys(PLATFORMS).map((key) => [key, { name: CODEX_PACKAGE }])),
  binPath: (platform, arch) => codexBinPath(platform, arch),
  packageVersion: (version, target) => codexPackageVersion(version, target.platform, target.arch),
  parseVersion: parseCodexVersion,
  versionFacts: (version) => (lookupCodexVersion(version) ? { codexVersion: version } : undefined),
};

/**
 * Codex's version facts are what its app-server announces: the version in its user agent, as
 * `codexVersion`. It must be the version the binary printed for `--version` and, for a qualified
 * version, the recorded one.
 */
export function checkCodexFacts(announced: VersionFacts, expected: ResolvedCli['expected'], cliVersion: string): string[] {
  const version = announced.codexVersion;
  if (!version || !semver.valid(version)) return [`codex version ${JSON.stringify(version ?? null)} is missing or malformed`];
  if (version !== cliVersion) return [`codex announces ${version}, but the binary printed ${cliVersion} for --version`];
  const recorded = expected?.facts.codexVersion;
  if (expected && recorded !== version) {
    return [
      `codex ${version}, but the ${expected.qualifiedBy === 'table' ? 'built-in table' : 'lock file'} records ${recorded ?? '(none)'} for ${cliVersion}`,
    ];
  }
  return [];
}
