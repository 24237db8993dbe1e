import type npmFetch from 'npm-registry-fetch';
import { OneWorksError } from '../errors.js';
import type { RegistryConfig } from './npm-config.js';

/**
 * Extra options for npm-registry-fetch (proxy, ca, timeout, fetchRetries…). The installer sets
 * `registry`, auth and `headers` itself; those keys here are overridden.
 */
export type FetchOptions = Readonly<Partial<npmFetch.Options>>;

/** The abbreviated ("corgi") packument; npm asks for it the same way. */
export const CORGI_ACCEPT = 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*';

// npm's own defaults, except a bounded retry count so a dead registry fails in seconds, not minutes.
const DEFAULT_FETCH_OPTIONS: FetchOptions = { fetchRetries: 2, fetchRetryMintimeout: 1_000, fetchRetryMaxtimeout: 10_000 };

/** What one registry request is about, for error messages. */
export interface RequestSubject {
  packageName: string;
  version: string;
  /** Registry (or tarball) host, without credentials. */
  host: string;
  what: 'packument' | 'tarball';
}

/** The registry URL that serves `packageName` (its scope's registry, else the default one). */
export function registryFor(config: RegistryConfig, packageName: string): string {
  const scope = packageName.startsWith('@') ? packageName.slice(0, packageName.indexOf('/')) : undefined;
  return (scope && config.scopes[scope]) || config.registry;
}

/** The packument URL of `packageName` (`@scope/name` is escaped as `@scope%2fname`, as npm does). */
export function packumentUrl(config: RegistryConfig, packageName: string): string {
  return new URL(packageName.replace('/', '%2f'), registryFor(config, packageName)).toString();
}

/**
 * The tarball URL to fetch: like npm's default `replace-registry-host=npmjs`, a tarball on
 * registry.npmjs.org is fetched from the configured registry instead, so a mirror that keeps
 * the original URLs in its packuments still serves the bytes (and sees the mirror's token).
 */
export function tarballUrlFor(tarballUrl: string, registry: string): string {
  const npmjs = 'https://registry.npmjs.org/';
  if (registry === npmjs) return tarballUrl;
  return tarballUrl.replace(/^https?:\/\/registry\.npmjs\.org\//, registry);
}

/** npm-registry-fetch options carrying the registry settings; tokens go in as nerf-dart keys only. */
export function toFetchOptions(config: RegistryConfig, extra: FetchOptions | undefined): npmFetch.Options {
  const options: npmFetch.Options = { ...DEFAULT_FETCH_OPTIONS, ...extra, registry: config.registry };
  for (const [scope, url] of Object.entries(config.scopes)) options[`${scope}:registry`] = url;
  for (const [nerfDart, token] of Object.entries(config.authTokens)) options[`${nerfDart}:_authToken`] = token;
  return options;
}

/** Host of `url` without user info, safe to show. */
export function displayHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(invalid URL)';
  }
}

/**
 * Maps a registry client failure to a OneWorksError: HTTP 404 → `install_not_found`, other HTTP
 * statuses and network errors → `install_failed`, with `E<status>` or the errno in `data.code`.
 * The message is built from the subject and the code only, so no URL, header or token leaks.
 */
export function toInstallError(error: unknown, subject: RequestSubject): OneWorksError {
  if (error instanceof OneWorksError) return error;
  const target = `${subject.packageName}@${subject.version}`;
  const status = statusOf(error);
  const code = status === undefined ? codeOf(error) : `E${status}`;
  const data = { packageName: subject.packageName, version: subject.version, host: subject.host, code };
  if (status === 404) {
    const what = subject.what === 'packument' ? `package ${subject.packageName} was not found` : `the tarball of ${target} was not found`;
    return new OneWorksError('install_not_found', `${what} on ${subject.host} (E404)`, { data, cause: error });
  }
  const reason = status === undefined ? code : `HTTP ${status}`;
  const hint = status === 401 || status === 403 ? '; check the auth token for this registry in .npmrc' : '';
  return new OneWorksError('install_failed', `could not fetch the ${subject.what} of ${target} from ${subject.host}: ${reason}${hint}`, {
    data,
    cause: error,
  });
}

function statusOf(error: unknown): number | undefined {
  if (error && typeof error === 'object' && 'statusCode' in error && typeof error.statusCode === 'number') return error.statusCode;
  return undefined;
}

function codeOf(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
  return 'network error';
}
