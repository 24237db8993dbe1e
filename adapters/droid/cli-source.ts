import { access, constants, mkdtemp, rm, stat } from 'node:fs/promises';
import { fileIdentity, rememberVersion, rememberedVersion } from '../../core/install/version-stamp.js';
import { tmpdir } from 'node:os';
import path from 'node:path';
import semver from 'semver';
import type { CliSource, FetchOptions, PrepareServices, ProgressReport, RegistryConfig, ResolvedCli } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import { defaultRange } from './config.js';
import { detectAvx2, droidBinPath, lookupVersion, type PlatformFacts, platformPackage, type ProtocolFacts } from './versions.js';

/** The `adapters.droid.cli` block: where the binary comes from and which versions it may have. */
export interface DroidCliSelection {
  source: CliSource;
  /** The pinned version (exact semver). */
  version: string;
  /** Absolute binary path; used by `source: path`. */
  path?: string | undefined;
  /** Range the binary must satisfy; default `>=M.m.0 <M.(m+1).0` of `version`. */
  range?: string | undefined;
}

/** What resolving a CLI needs from the runtime. */
export interface ResolveCliContext {
  /** The runtime's installer, npm settings and command runner (core/install createPrepareServices). */
  services: PrepareServices;
  /** `<cache>` root; managed installs go to `<cacheDir>/cli/droid/<version>/`. */
  cacheDir: string;
  /** The project's recorded probe results by CLI version (used for versions the table lacks). */
  lock: ReadonlyMap<string, ProtocolFacts>;
  /** The user's environment: PATH for `system`, npm settings for `managed`. Only PATH reaches `droid --version`. */
  env: Readonly<Record<string, string | undefined>>;
  onProgress?: (report: ProgressReport) => void;
  signal?: AbortSignal;
  /** Registry settings; default: read from `env` and the `.npmrc` files of the cwd and home. */
  registry?: RegistryConfig;
  fetchOptions?: FetchOptions;
  /** Platform to pick the package for; default: this machine. */
  platform?: PlatformFacts;
  /** When false, a managed version that is not in the cache is `cli_not_found` instead of a download. */
  install?: boolean;
  /** Reuse a recorded `--version` answer of the same binary file (PrepareContext.reuseVersionCheck). */
  reuseVersionCheck?: boolean;
}

const VERSION_TIMEOUT_MS = 15_000;
const VERSION_MAX_OUTPUT_BYTES = 64 * 1024;

/**
 * Finds (or installs, for `managed`) the droid binary the selection names, runs its
 * `--version` in a minimal environment and checks it against the range. Errors: `cli_not_found`
 * (nothing executable there, with how to fix it), `unsupported_cli_version` (outside the range),
 * `probe_failed` (no version printed), `config_invalid`, and the installer's `install_*` codes.
 */
export async function resolveDroidCli(cli: DroidCliSelection, ctx: ResolveCliContext): Promise<ResolvedCli> {
  const range = cli.range ?? defaultRange(cli.version);
  if (semver.validRange(range) === null) {
    throw new OneWorksError('config_invalid', `adapters.droid.cli.range is not a semver range: ${JSON.stringify(range)}`);
  }
  const pinnedBy = range === defaultRange(cli.version) ? `adapters.droid.cli.version ${cli.version}` : `adapters.droid.cli.range ${range}`;
  const located = await locateBinary(cli, ctx);
  const identity = ctx.reuseVersionCheck ? await fileIdentity(located.binaryPath) : undefined;
  const remembered = ctx.reuseVersionCheck ? await rememberedVersion(ctx.cacheDir, located.binaryPath) : undefined;
  let version: string;
  if (remembered !== undefined && semver.satisfies(remembered, range)) {
    version = remembered;
  } else {
    ctx.onProgress?.({ phase: 'check', message: `checking ${located.binaryPath} --version` });
    version = await checkCliVersion(located.binaryPath, range, { services: ctx.services, pinnedBy, env: ctx.env, signal: ctx.signal });
    if (ctx.reuseVersionCheck) await rememberVersion(ctx.cacheDir, located.binaryPath, version, identity);
  }
  return {
    source: cli.source,
    binaryPath: located.binaryPath,
    version,
    range,
    expected: lookupVersion(version, ctx.lock),
    ...(located.package ? { package: located.package } : {}),
  };
}

/** Options of {@link checkCliVersion}. */
export interface CheckCliVersionOptions {
  /** Runs the command (PrepareServices.runCommand). */
  services: Pick<PrepareServices, 'runCommand'>;
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
  let output: Awaited<ReturnType<PrepareServices['runCommand']>>;
  try {
    const PATH = (options.env ?? process.env).PATH ?? '';
    output = await options.services.runCommand(binaryPath, ['--version'], {
      cwd: home,
      env: { PATH, HOME: home },
      timeoutMs: options.timeoutMs ?? VERSION_TIMEOUT_MS,
      maxOutputBytes: VERSION_MAX_OUTPUT_BYTES,
      signal: options.signal,
    });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
  const version = parseVersion(output.stdout);
  if (output.timedOut || output.exitCode !== 0 || version === undefined) {
    const printed = firstBytes(output.stdout, output.stderr);
    const why = output.timedOut
      ? `did not answer --version within ${options.timeoutMs ?? VERSION_TIMEOUT_MS} ms (ended with its child processes)`
      : output.exitCode !== 0
        ? `exited with ${output.exitCode === null ? `signal ${output.signal}` : `status ${output.exitCode}`} on --version; it printed ${printed}`
        : `printed no version for --version; it printed ${printed}`;
    throw new OneWorksError('probe_failed', `droid at ${binaryPath} ${why}`, {
      data: { binaryPath, exitCode: output.exitCode, signal: output.signal, stderr: output.stderr.slice(-500) },
    });
  }
  if (!semver.satisfies(version, range)) {
    const origin = options.pinnedBy ? ` (${options.pinnedBy})` : '';
    throw new OneWorksError(
      'unsupported_cli_version',
      `droid at ${binaryPath} is ${version}, outside the pinned range ${range}${origin}\n` +
        'Install a droid in that range, point adapters.droid.cli at one, or use source: managed to let One Works install the pinned version.',
      { data: { binaryPath, version, range } },
    );
  }
  return version;
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

// droid prints a bare `0.225.2`; tolerate a `droid 0.225.2` style prefix on the first line.
function parseVersion(stdout: string): string | undefined {
  const firstLine = stdout.trim().split('\n', 1)[0] ?? '';
  const match = /(?:^|\s|v)(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)(?:\s|$)/.exec(firstLine);
  return match?.[1] && semver.valid(match[1]) ? match[1] : undefined;
}

interface LocatedBinary {
  binaryPath: string;
  package?: ResolvedCli['package'];
}

async function locateBinary(cli: DroidCliSelection, ctx: ResolveCliContext): Promise<LocatedBinary> {
  if (cli.source === 'path') return { binaryPath: await checkExecutable(cli.path) };
  if (cli.source === 'system') return { binaryPath: await findOnPath(ctx.env) };
  const facts = ctx.platform ?? { platform: process.platform, arch: process.arch, hasAvx2: detectAvx2() };
  const packageName = platformPackage(facts);
  const targetDir = path.join(ctx.cacheDir, 'cli', 'droid', cli.version);
  if (ctx.install === false && !(await ctx.services.isInstalled(targetDir, packageName, cli.version))) {
    throw new OneWorksError(
      'cli_not_found',
      `managed droid ${cli.version} is not installed in ${ctx.cacheDir}; run \`one-works adapters install droid\` (or any session installs it on first use)`,
      { data: { version: cli.version, cacheDir: ctx.cacheDir } },
    );
  }
  const installed = await ctx.services.installPackage({
    packageName,
    version: cli.version,
    targetDir,
    binPath: droidBinPath(facts.platform),
    registry: ctx.registry ?? (await ctx.services.readNpmConfig({ projectDir: process.cwd(), env: ctx.env })),
    ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.fetchOptions ? { fetchOptions: ctx.fetchOptions } : {}),
  });
  return {
    binaryPath: installed.binaryPath,
    package: { name: packageName, integrity: installed.integrity, fromCache: installed.fromCache },
  };
}

async function checkExecutable(binaryPath: string | undefined): Promise<string> {
  if (!binaryPath || !path.isAbsolute(binaryPath)) {
    throw new OneWorksError(
      'config_invalid',
      `adapters.droid.cli.path must be an absolute path when source is "path", got ${JSON.stringify(binaryPath)}`,
    );
  }
  const info = await stat(binaryPath).catch(() => undefined);
  if (!info) {
    throw new OneWorksError(
      'cli_not_found',
      `droid at ${binaryPath} does not exist (adapters.droid.cli.path); fix the path or use source: managed`,
      {
        data: { binaryPath },
      },
    );
  }
  if (!info.isFile() || !(await isExecutable(binaryPath))) {
    throw new OneWorksError(
      'cli_not_found',
      `droid at ${binaryPath} is not an executable file (adapters.droid.cli.path); fix the path or its mode`,
      {
        data: { binaryPath },
      },
    );
  }
  return binaryPath;
}

async function findOnPath(env: Readonly<Record<string, string | undefined>>): Promise<string> {
  const name = process.platform === 'win32' ? 'droid.exe' : 'droid';
  // Empty PATH entries mean the current directory; a binary there is never picked up implicitly.
  const dirs = (env.PATH ?? '').split(path.delimiter).filter((dir) => path.isAbsolute(dir));
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    const info = await stat(candidate).catch(() => undefined);
    if (info?.isFile() && (await isExecutable(candidate))) return candidate;
  }
  throw new OneWorksError(
    'cli_not_found',
    `droid was not found on PATH (${dirs.length} directories searched); install droid and put it on PATH, or set adapters.droid.cli.source: managed to let One Works install the pinned version`,
    { data: { searched: dirs } },
  );
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}
