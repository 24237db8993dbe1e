import { access, constants, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import semver from 'semver';
import type { CliDescriptor, CliSelection, PrepareContext, PrepareServices, ResolvedCli, VersionFacts } from '../adapter.js';
import { defaultCliRange } from '../adapter-config.js';
import { OneWorksError } from '../errors.js';
import { detectPlatform, selectPlatformPackage } from './platform.js';
import { fileIdentity, rememberedVersion, rememberVersion } from './version-stamp.js';

/**
 * One CLI resolver for every adapter: finds (or installs, for `managed`) the binary a `cli`
 * block selects, runs its `--version` in a minimal environment, checks it against the pinned
 * range and looks its version facts up (the adapter's table, else the project's lock). The
 * adapter supplies only what differs, as a {@link CliDescriptor}; it reaches this function
 * through `PrepareServices.resolveCli`.
 */

const VERSION_TIMEOUT_MS = 15_000;
const VERSION_MAX_OUTPUT_BYTES = 64 * 1024;

/**
 * Resolves and verifies the binary `selection` names. Errors: `cli_not_found` (nothing
 * executable there, with how to fix it), `unsupported_cli_version` (outside the range),
 * `probe_failed` (no version printed), `unsupported_platform`, `config_invalid`, and the
 * installer's `install_*` codes.
 */
export async function resolveCli(selection: CliSelection, descriptor: CliDescriptor, ctx: PrepareContext): Promise<ResolvedCli> {
  const key = `adapters.${descriptor.adapter}.cli`;
  const range = selection.range ?? defaultCliRange(selection.version);
  if (semver.validRange(range) === null) {
    throw new OneWorksError('config_invalid', `${key}.range is not a semver range: ${JSON.stringify(range)}`);
  }
  const pinnedBy = range === defaultCliRange(selection.version) ? `${key}.version ${selection.version}` : `${key}.range ${range}`;
  const env = ctx.env ?? process.env;
  const located = await locateBinary(selection, descriptor, ctx, env);
  // Looked up once, for the remembered version and for remembering a new one.
  const identity = ctx.reuseVersionCheck ? fileIdentity(located.binaryPath) : undefined;
  const remembered = identity ? await rememberedVersion(ctx.cacheDir, located.binaryPath, identity) : undefined;
  let version: string;
  if (remembered !== undefined && semver.satisfies(remembered, range)) {
    version = remembered;
  } else if (ctx.versionCheck === false) {
    throw new OneWorksError(
      'probe_failed',
      `the version of ${descriptor.displayName} at ${located.binaryPath} is not recorded on this machine, and this preparation runs no --version`,
      { data: { binaryPath: located.binaryPath } },
    );
  } else {
    ctx.onProgress?.({ phase: 'check', message: `checking ${located.binaryPath} --version` });
    version = await checkCliVersion(located.binaryPath, range, {
      services: ctx.services,
      displayName: descriptor.displayName,
      parseVersion: descriptor.parseVersion,
      pinnedBy,
      env,
      signal: ctx.signal,
    });
    if (identity) await rememberVersion(ctx.cacheDir, located.binaryPath, version, await identity);
  }
  return {
    source: selection.source,
    binaryPath: located.binaryPath,
    version,
    range,
    expected: lookupVersionFacts(version, descriptor, ctx.lock),
    ...(located.package ? { package: located.package } : {}),
  };
}

/**
 * Version facts for a CLI version: the descriptor's table (release versions only), else the
 * project's lock entry for exactly that version, else undefined (unqualified).
 */
export function lookupVersionFacts(
  version: string,
  descriptor: Pick<CliDescriptor, 'versionFacts'>,
  lock?: PrepareContext['lock'],
): ResolvedCli['expected'] {
  const parsed = semver.parse(version);
  if (!parsed) return undefined;
  const table: VersionFacts | undefined = parsed.prerelease.length === 0 ? descriptor.versionFacts(version) : undefined;
  if (table) return { facts: table, qualifiedBy: 'table' };
  const locked = lock?.get(version);
  return locked ? { facts: locked.facts, qualifiedBy: 'lock' } : undefined;
}

/** Options of {@link checkCliVersion}. */
export interface CheckCliVersionOptions {
  /** Runs the command (PrepareServices.runCommand). */
  services: Pick<PrepareServices, 'runCommand'>;
  /** How messages name the CLI, e.g. `droid`. */
  displayName: string;
  /** Reads the version off the `--version` output. */
  parseVersion: CliDescriptor['parseVersion'];
  /** Where the range comes from, shown in the error, e.g. `adapters.droid.cli.version 0.225.2`. */
  pinnedBy?: string;
  /** PATH is taken from here (default: this process's PATH); nothing else is passed on. */
  env?: Readonly<Record<string, string | undefined>>;
  signal?: AbortSignal | undefined;
  /** Deadline of the `--version` call (default 15 s); the binary's whole process group is ended then. */
  timeoutMs?: number;
}

/**
 * Runs `<binaryPath> --version` with only PATH and a throwaway HOME (removed afterwards) and
 * returns the version it printed when it satisfies `range`. Throws `unsupported_cli_version`
 * naming the path, the version and the range; `probe_failed` when no version comes out.
 */
export async function checkCliVersion(binaryPath: string, range: string, options: CheckCliVersionOptions): Promise<string> {
  const home = await mkdtemp(path.join(tmpdir(), 'one-works-version-'));
  const timeoutMs = options.timeoutMs ?? VERSION_TIMEOUT_MS;
  let output: Awaited<ReturnType<PrepareServices['runCommand']>>;
  try {
    const PATH = (options.env ?? process.env).PATH ?? '';
    output = await options.services.runCommand(binaryPath, ['--version'], {
      cwd: home,
      env: { PATH, HOME: home },
      timeoutMs,
      maxOutputBytes: VERSION_MAX_OUTPUT_BYTES,
      signal: options.signal,
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  const name = options.displayName;
  const version = output.exitCode === 0 ? parseFirstLine(output.stdout, options.parseVersion) : undefined;
  if (output.timedOut || output.exitCode !== 0 || version === undefined) {
    const printed = firstBytes(output.stdout, output.stderr);
    const why = output.timedOut
      ? `did not answer --version within ${timeoutMs} ms (ended with its child processes)`
      : output.exitCode !== 0
        ? `exited with ${output.exitCode === null ? `signal ${output.signal}` : `status ${output.exitCode}`} on --version; it printed ${printed}`
        : `printed no version for --version; it printed ${printed}`;
    throw new OneWorksError('probe_failed', `${name} at ${binaryPath} ${why}`, {
      data: { binaryPath, exitCode: output.exitCode, signal: output.signal, stderr: output.stderr.slice(-500) },
    });
  }
  if (!semver.satisfies(version, range)) {
    const origin = options.pinnedBy ? ` (${options.pinnedBy})` : '';
    throw new OneWorksError(
      'unsupported_cli_version',
      `${name} at ${binaryPath} is ${version}, outside the pinned range ${range}${origin}\n` +
        `Install a ${name} in that range, point the adapter's cli block at one, or use source: managed to let One Works install the pinned version.`,
      { data: { binaryPath, version, range } },
    );
  }
  return version;
}

// The descriptor reads the first line; a version it returns must be valid semver.
function parseFirstLine(stdout: string, parse: CliDescriptor['parseVersion']): string | undefined {
  const version = parse(stdout.trim().split('\n', 1)[0] ?? '');
  return version !== undefined && semver.valid(version) === version ? version : undefined;
}

// The first bytes a binary printed, control characters escaped, for an error message (the
// CLI redacts every message it prints).
function firstBytes(stdout: string, stderr: string): string {
  const quote = (text: string): string => JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
  if (stdout.trim() === '' && stderr.trim() === '') return 'nothing';
  return [
    stdout.trim() === '' ? 'nothing on stdout' : `${quote(stdout)} on stdout`,
    ...(stderr.trim() ? [`${quote(stderr)} on stderr`] : []),
  ].join(' and ');
}

interface LocatedBinary {
  binaryPath: string;
  package?: ResolvedCli['package'];
}

async function locateBinary(
  selection: CliSelection,
  descriptor: CliDescriptor,
  ctx: PrepareContext,
  env: Readonly<Record<string, string | undefined>>,
): Promise<LocatedBinary> {
  const key = `adapters.${descriptor.adapter}.cli`;
  if (selection.source === 'path') return { binaryPath: await checkExecutable(selection.path, descriptor.displayName, key) };
  if (selection.source === 'system') return { binaryPath: await findOnPath(descriptor, env) };
  const target = ctx.platform ?? detectPlatform();
  const packageName = selectPlatformPackage(descriptor, target);
  const targetDir = path.join(ctx.cacheDir, 'cli', descriptor.adapter, selection.version);
  const packageVersion = descriptor.packageVersion?.(selection.version, target) ?? selection.version;
  if (ctx.install === false && !(await ctx.services.isInstalled(targetDir, packageName, packageVersion))) {
    throw new OneWorksError(
      'cli_not_found',
      `managed ${descriptor.displayName} ${selection.version} is not installed in ${ctx.cacheDir}; run \`one-works adapters install ${descriptor.adapter}\` (or any session installs it on first use)`,
      { data: { version: selection.version, cacheDir: ctx.cacheDir } },
    );
  }
  const installed = await ctx.services.installPackage({
    packageName,
    version: packageVersion,
    targetDir,
    binPath: descriptor.binPath(target.platform, target.arch),
    // Read only for a download: a cache hit (nearly every session start) reads no .npmrc.
    registry: ctx.registry ?? (() => ctx.services.readNpmConfig({ projectDir: ctx.cwd ?? process.cwd(), env })),
    ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.fetchOptions ? { fetchOptions: ctx.fetchOptions } : {}),
  });
  return {
    binaryPath: installed.binaryPath,
    package: { name: packageName, integrity: installed.integrity, fromCache: installed.fromCache },
  };
}

async function checkExecutable(binaryPath: string | undefined, name: string, key: string): Promise<string> {
  if (!binaryPath || !path.isAbsolute(binaryPath)) {
    throw new OneWorksError(
      'config_invalid',
      `${key}.path must be an absolute path when source is "path", got ${JSON.stringify(binaryPath)}`,
    );
  }
  const info = await stat(binaryPath).catch(() => undefined);
  if (!info) {
    throw new OneWorksError('cli_not_found', `${name} at ${binaryPath} does not exist (${key}.path); fix the path or use source: managed`, {
      data: { binaryPath },
    });
  }
  if (!info.isFile() || !(await isExecutable(binaryPath))) {
    throw new OneWorksError('cli_not_found', `${name} at ${binaryPath} is not an executable file (${key}.path); fix the path or its mode`, {
      data: { binaryPath },
    });
  }
  return binaryPath;
}

async function findOnPath(descriptor: CliDescriptor, env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const name = process.platform === 'win32' ? `${descriptor.executable}.exe` : descriptor.executable;
  // Empty PATH entries mean the current directory; a binary there is never picked up implicitly.
  const dirs = (env.PATH ?? '').split(path.delimiter).filter((dir) => path.isAbsolute(dir));
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    const info = await stat(candidate).catch(() => undefined);
    if (info?.isFile() && (await isExecutable(candidate))) return candidate;
  }
  throw new OneWorksError(
    'cli_not_found',
    `${descriptor.executable} was not found on PATH (${dirs.length} directories searched); install ${descriptor.displayName} and put it on PATH, or set adapters.${descriptor.adapter}.cli.source: managed to let One Works install the pinned version`,
    { data: { searched: dirs } },
  );
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}
