import { access, constants, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import semver from 'semver';
import type { CliSource, FetchOptions, PrepareServices, ProgressReport, RegistryConfig } from '../adapter.js';
import { OneWorksError } from '../errors.js';
import { fileIdentity, rememberVersion, rememberedVersion } from './version-stamp.js';

/**
 * One CLI resolver for every adapter: finds (or installs, for `managed`) the binary a `cli`
 * block selects, runs its `--version` in a minimal environment and checks it against the
 * pinned range. The adapter supplies what differs: its display name, its platform package and
 * the binary's path inside it, and how to read its `--version` output.
 */

/** The `adapters.<name>.cli` block. */
export interface CliSelection {
  source: CliSource;
  /** The pinned version (exact semver). */
  version: string;
  path?: string | undefined;
  range: string;
}

/** What an adapter says about its CLI. */
export interface CliDescriptor {
  /** The adapter name, e.g. `claude-code`: cache folder, messages and `adapters install <name>`. */
  adapter: string;
  /** The executable name looked up on PATH for `system`, e.g. `claude`. */
  executable: string;
  /** The npm package carrying the binary on this machine; throws `unsupported_platform` when there is none. */
  platformPackage(): string;
  /** The binary's path inside the package, e.g. `claude`. */
  binPath: string;
  /**
   * The version of the platform package carrying CLI `version`, when it differs (Codex publishes
   * `@openai/codex@<version>-linux-x64`). Default: the CLI version itself.
   */
  packageVersion?(version: string): string;
  /** The version in the `--version` output, or undefined. */
  parseVersion(stdout: string): string | undefined;
}

export interface ResolveCliOptions {
  services: PrepareServices;
  cacheDir: string;
  env: Readonly<Record<string, string | undefined>>;
  onProgress?: (report: ProgressReport) => void;
  signal?: AbortSignal;
  registry?: RegistryConfig;
  fetchOptions?: FetchOptions;
  install?: boolean;
  /** Reuse a recorded `--version` answer of the same binary file (PrepareContext.reuseVersionCheck). */
  reuseVersionCheck?: boolean;
}

export interface LocatedCli {
  binaryPath: string;
  version: string;
  package?: { name: string; integrity: string; fromCache: boolean };
}

const VERSION_TIMEOUT_MS = 15_000;
const VERSION_MAX_OUTPUT_BYTES = 64 * 1024;

/**
 * Resolves the binary. Errors: `cli_not_found`, `unsupported_cli_version`, `probe_failed`,
 * `config_invalid`, and the installer's `install_*` codes.
 */
export async function resolveCli(cli: CliSelection, descriptor: CliDescriptor, options: ResolveCliOptions): Promise<LocatedCli> {
  const key = `adapters.${descriptor.adapter}.cli`;
  const located = await locate(cli, descriptor, options, key);
  const identity = options.reuseVersionCheck ? await fileIdentity(located.binaryPath) : undefined;
  const remembered = options.reuseVersionCheck ? await rememberedVersion(options.cacheDir, located.binaryPath) : undefined;
  if (remembered !== undefined && semver.satisfies(remembered, cli.range)) {
    return { binaryPath: located.binaryPath, version: remembered, ...(located.package ? { package: located.package } : {}) };
  }
  options.onProgress?.({ phase: 'check', message: `checking ${located.binaryPath} --version` });
  const home = await mkdtemp(path.join(tmpdir(), 'one-works-version-'));
  let output: Awaited<ReturnType<PrepareServices['runCommand']>>;
  try {
    output = await options.services.runCommand(located.binaryPath, ['--version'], {
      cwd: home,
      env: { PATH: options.env.PATH ?? '', HOME: home },
      timeoutMs: VERSION_TIMEOUT_MS,
      maxOutputBytes: VERSION_MAX_OUTPUT_BYTES,
      signal: options.signal,
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  const version = descriptor.parseVersion(output.stdout);
  if (output.timedOut || output.exitCode !== 0 || version === undefined) {
    const why = output.timedOut
      ? `did not answer --version within ${VERSION_TIMEOUT_MS} ms`
      : output.exitCode !== 0
        ? `exited with ${output.exitCode ?? output.signal} on --version`
        : `printed no version for --version: ${JSON.stringify(output.stdout.slice(0, 200))}`;
    throw new OneWorksError('probe_failed', `${descriptor.adapter} CLI at ${located.binaryPath} ${why}`, {
      data: { binaryPath: located.binaryPath, exitCode: output.exitCode, signal: output.signal },
    });
  }
  if (!semver.satisfies(version, cli.range)) {
    throw new OneWorksError(
      'unsupported_cli_version',
      `${descriptor.adapter} CLI at ${located.binaryPath} is ${version}, outside the pinned range ${cli.range} (${key})\n` +
        `Install a version in that range, point ${key} at one, or use source: managed to let One Works install the pinned version.`,
      { data: { binaryPath: located.binaryPath, version, range: cli.range } },
    );
  }
  if (options.reuseVersionCheck) await rememberVersion(options.cacheDir, located.binaryPath, version, identity);
  return { binaryPath: located.binaryPath, version, ...(located.package ? { package: located.package } : {}) };
}

async function locate(
  cli: CliSelection,
  descriptor: CliDescriptor,
  options: ResolveCliOptions,
  key: string,
): Promise<Omit<LocatedCli, 'version'>> {
  if (cli.source === 'path') return { binaryPath: await checkExecutable(cli.path, key) };
  if (cli.source === 'system') return { binaryPath: await findOnPath(descriptor, options.env) };
  const packageName = descriptor.platformPackage();
  const packageVersion = descriptor.packageVersion?.(cli.version) ?? cli.version;
  const targetDir = path.join(options.cacheDir, 'cli', descriptor.adapter, cli.version);
  if (options.install === false && !(await options.services.isInstalled(targetDir, packageName, packageVersion))) {
    throw new OneWorksError(
      'cli_not_found',
      `managed ${descriptor.adapter} ${cli.version} is not installed in ${options.cacheDir}; run \`one-works adapters install ${descriptor.adapter}\``,
      { data: { version: cli.version, cacheDir: options.cacheDir } },
    );
  }
  const installed = await options.services.installPackage({
    packageName,
    version: packageVersion,
    targetDir,
    binPath: descriptor.binPath,
    registry: options.registry ?? (await options.services.readNpmConfig({ projectDir: process.cwd(), env: options.env })),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.fetchOptions ? { fetchOptions: options.fetchOptions } : {}),
  });
  return {
    binaryPath: installed.binaryPath,
    package: { name: packageName, integrity: installed.integrity, fromCache: installed.fromCache },
  };
}

async function checkExecutable(binaryPath: string | undefined, key: string): Promise<string> {
  if (!binaryPath || !path.isAbsolute(binaryPath)) {
    throw new OneWorksError(
      'config_invalid',
      `${key}.path must be an absolute path when source is "path", got ${JSON.stringify(binaryPath)}`,
    );
  }
  const info = await stat(binaryPath).catch(() => undefined);
  if (!info?.isFile() || !(await isExecutable(binaryPath))) {
    throw new OneWorksError('cli_not_found', `${binaryPath} is not an executable file (${key}.path); fix the path or use source: managed`, {
      data: { binaryPath },
    });
  }
  return binaryPath;
}

async function findOnPath(descriptor: CliDescriptor, env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const dirs = (env.PATH ?? '').split(path.delimiter).filter((dir) => path.isAbsolute(dir));
  for (const dir of dirs) {
    const candidate = path.join(dir, descriptor.executable);
    const info = await stat(candidate).catch(() => undefined);
    if (info?.isFile() && (await isExecutable(candidate))) return candidate;
  }
  throw new OneWorksError(
    'cli_not_found',
    `${descriptor.executable} was not found on PATH (${dirs.length} directories searched); put it on PATH, or set adapters.${descriptor.adapter}.cli.source: managed`,
    { data: { searched: dirs } },
  );
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}
