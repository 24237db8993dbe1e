import { Transform } from 'node:stream';
import npmFetch from 'npm-registry-fetch';
import ssri from 'ssri';
import * as tar from 'tar';
import { OneWorksError } from '../errors.js';
import type { ResolvedVersion } from './packument.js';
import type { ProgressThrottle } from './progress.js';
import { displayHost, toInstallError } from './registry-client.js';

/** Inputs of one tarball download. */
export interface FetchTarballOptions {
  resolved: ResolvedVersion;
  /** Empty directory the package contents land in (the tarball's top folder is stripped). */
  dir: string;
  fetchOptions: npmFetch.Options;
  progress: ProgressThrottle;
  signal: AbortSignal | undefined;
}

/**
 * Streams the tarball into `dir`, hashing it with `dist.integrity` on the way and unpacking it
 * at the same time (no install scripts exist at this level: files are only written).
 *
 * Resolves with the verified integrity once every byte matched and every file is on disk.
 * Rejects with `install_integrity` on a digest mismatch, even if unpacking failed first on the
 * damaged bytes (the mismatch is the real cause); `install_failed` / `install_not_found` for
 * registry and network errors; `request_cancelled` when `signal` aborts. On rejection `dir`
 * may hold partial files: the caller removes it.
 */
export async function fetchTarball(options: FetchTarballOptions): Promise<string> {
  const { resolved, progress } = options;
  const target = `${resolved.packageName}@${resolved.version}`;
  const subject = {
    packageName: resolved.packageName,
    version: resolved.version,
    host: displayHost(resolved.tarballUrl),
    what: 'tarball' as const,
  };
  throwIfAborted(options.signal, target);

  let response: Awaited<ReturnType<typeof npmFetch>>;
  try {
    response = await npmFetch(resolved.tarballUrl, options.fetchOptions);
  } catch (error) {
    throw toInstallError(error, subject);
  }
  const body = response.body;
  if (!body) throw new OneWorksError('install_failed', `the registry sent no body for the tarball of ${target}`, { data: { ...subject } });
  const totalBytes = Number(response.headers.get('content-length')) || resolved.unpackedSize;
  const message = `downloading ${target}`;
  let receivedBytes = 0;
  progress.phase({ phase: 'download', message, receivedBytes, totalBytes });

  const verifier = ssri.integrityStream({ integrity: resolved.integrity });
  // strict: a damaged entry is an error, not a warning; preserveOwner off even when run as root.
  const unpack = new tar.Unpack({ cwd: options.dir, strip: 1, strict: true, preserveOwner: false });

  const outcome = await new Promise<{ integrity?: string; failure?: unknown }>((resolve) => {
    let verified: string | undefined;
    let extractFailure: unknown;
    let settled = false;
    const settle = (result: { integrity?: string; failure?: unknown }): void => {
      if (settled) return;
      settled = true;
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const onAbort = (): void => {
      const error = cancelled(target);
      verifier.unpipe(unpack);
      unpack.abort(error);
      body.emit('error', error);
      settle({ failure: error });
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    body.on('error', (error: unknown) => settle({ failure: toInstallError(error, subject) }));
    verifier.on('error', (error: unknown) => settle({ failure: integrityError(error, resolved) }));
    verifier.on('integrity', (integrity: unknown) => {
      verified = String(integrity);
      if (extractFailure !== undefined) settle({ failure: extractFailure });
    });
    unpack.on('error', (error: unknown) => {
      // Keep hashing the rest: if the bytes were tampered with, the digest is the truthful answer.
      extractFailure = new OneWorksError('install_failed', `could not unpack ${target}: ${errorMessage(error)}`, {
        data: { packageName: resolved.packageName, version: resolved.version },
        cause: error,
      });
      // Deferred: tar fails inside the verifier's write, and the verifier pauses itself right
      // after that write returns false; resuming synchronously would be undone.
      setImmediate(() => {
        verifier.unpipe(unpack);
        verifier.resume();
      });
      if (verified !== undefined) settle({ failure: extractFailure });
    });
    unpack.on('close', () => {
      if (extractFailure !== undefined) return;
      settle(verified !== undefined ? { integrity: verified } : { failure: integrityError(undefined, resolved) });
    });
    // Count in a stage of its own: a 'data' listener on a piped minipass stream (the verifier)
    // reorders chunks under backpressure and corrupts what tar sees.
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        receivedBytes += chunk.length;
        progress.bytes({ phase: 'download', message, receivedBytes, totalBytes });
        callback(null, chunk);
      },
    });
    counter.on('error', (error: unknown) => settle({ failure: toInstallError(error, subject) }));
    body.pipe(counter).pipe(verifier).pipe(unpack);
  });
  if (outcome.failure !== undefined) throw outcome.failure;
  progress.phase({ phase: 'download', message, receivedBytes, totalBytes: totalBytes ?? receivedBytes });
  return outcome.integrity ?? resolved.integrity;
}

// ssri reports EINTEGRITY with the digest it found; the message shows both digests of one algorithm.
function integrityError(error: unknown, resolved: ResolvedVersion): OneWorksError {
  const fact = (key: string): string | undefined =>
    error && typeof error === 'object' && key in error ? String((error as Record<string, unknown>)[key]) : undefined;
  const algorithm = fact('algorithm') ?? resolved.integrity.split('-', 1)[0] ?? 'unknown';
  const expected = digestOf(resolved.integrity, algorithm) ?? resolved.integrity;
  const got = digestOf(fact('found'), algorithm) ?? 'no digest (the download ended early)';
  return new OneWorksError(
    'install_integrity',
    `${resolved.packageName}@${resolved.version} failed its integrity check: expected ${expected}, got ${got}`,
    { data: { packageName: resolved.packageName, version: resolved.version, algorithm, expected, got }, cause: error },
  );
}

// The `<algorithm>-<base64>` member of an SRI string, without options.
function digestOf(sri: string | undefined, algorithm: string): string | undefined {
  return sri
    ?.split(/\s+/)
    .find((hash) => hash.startsWith(`${algorithm}-`))
    ?.split('?')[0];
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function cancelled(target: string): OneWorksError {
  return new OneWorksError('request_cancelled', `the install of ${target} was cancelled`);
}

function throwIfAborted(signal: AbortSignal | undefined, target: string): void {
  if (signal?.aborted) throw cancelled(target);
}
