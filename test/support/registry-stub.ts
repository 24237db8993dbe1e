import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ssri from 'ssri';
import * as tar from 'tar';

/** One published version: the bytes served, and the integrity the packument claims (default: of those bytes). */
export interface StubVersion {
  tarball: Buffer;
  integrity?: string;
  /** Runtime `dependencies` the packument declares for the version. */
  dependencies?: Record<string, string>;
}

export interface RegistryStubOptions {
  /** Package name → version → what is published. */
  packages: Record<string, Record<string, StubVersion>>;
  /** When set, requests without `authorization: Bearer <token>` get 401. */
  requireToken?: string;
  /** Serve HTTPS with this key and certificate (PEM) instead of HTTP. */
  tls?: { key: string; cert: string };
}

export interface RecordedRegistryRequest {
  method: string;
  path: string;
  authorization: string | undefined;
}

/** A fake npm registry on 127.0.0.1 serving corgi packuments and tarballs. */
export interface RegistryStub {
  /** Base URL with a trailing slash. */
  url: string;
  /** Every request received, in order. */
  requests: RecordedRegistryRequest[];
  /** After this many bytes of a tarball, stop sending and hold the connection open (undefined: no stall). */
  stallAfterBytes: number | undefined;
  /** Closes the server and every open connection. */
  close(): Promise<void>;
}

const TARBALL_PATH = /^\/(.+)\/-\/[^/]+-(\d+\.\d+\.\d+[^/]*)\.tgz$/;

/** Starts the stub on 127.0.0.1 at a free port. The caller closes it. */
export async function startRegistryStub(options: RegistryStubOptions): Promise<RegistryStub> {
  const requests: RecordedRegistryRequest[] = [];
  let base = '';
  const stub: RegistryStub = {
    url: '',
    requests,
    stallAfterBytes: undefined,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const urlPath = decodeURIComponent(new URL(req.url ?? '/', base).pathname);
    requests.push({ method: req.method ?? 'GET', path: urlPath, authorization: req.headers.authorization });
    if (options.requireToken !== undefined && req.headers.authorization !== `Bearer ${options.requireToken}`) {
      return sendJson(res, 401, { error: 'unauthorized' });
    }
    const tarballMatch = TARBALL_PATH.exec(urlPath);
    if (tarballMatch) {
      const published = options.packages[tarballMatch[1] ?? '']?.[tarballMatch[2] ?? ''];
      if (!published) return sendJson(res, 404, { error: 'not found' });
      return sendTarball(res, published.tarball, stub.stallAfterBytes);
    }
    const name = urlPath.slice(1);
    const versions = options.packages[name];
    if (!versions) return sendJson(res, 404, { error: 'not found' });
    sendJson(res, 200, packument(base, name, versions));
  };
  const server = options.tls ? createHttpsServer(options.tls, handle) : createServer(handle);

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  stub.url = base;
  return stub;
}

function packument(base: string, name: string, versions: Record<string, StubVersion>): unknown {
  const shortName = name.split('/').pop() ?? name;
  const entries = Object.entries(versions).map(([version, published]) => [
    version,
    {
      name,
      version,
      ...(published.dependencies ? { dependencies: published.dependencies } : {}),
      dist: {
        tarball: `${base}${name}/-/${shortName}-${version}.tgz`,
        integrity: published.integrity ?? ssri.fromData(published.tarball, { algorithms: ['sha512'] }).toString(),
      },
    },
  ]);
  return { name, 'dist-tags': {}, versions: Object.fromEntries(entries) };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/vnd.npm.install-v1+json' });
  res.end(JSON.stringify(body));
}

function sendTarball(res: ServerResponse, tarball: Buffer, stallAfterBytes: number | undefined): void {
  res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(tarball.length) });
  if (stallAfterBytes === undefined) {
    res.end(tarball);
    return;
  }
  // Half a download, then silence: the client sits mid-stream until it is killed or the stub closes.
  res.write(tarball.subarray(0, stallAfterBytes));
}

/** A file to put in a package, relative to its root. */
export interface PackageFile {
  content: string | Buffer;
  mode?: number;
}

/** Builds an npm-style tarball (`package/` prefix, gzip) holding `files`. */
export async function buildTarball(files: Record<string, PackageFile>): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ow-registry-stub-'));
  try {
    for (const [relative, file] of Object.entries(files)) {
      const target = path.join(dir, 'package', relative);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, file.content, { mode: file.mode ?? 0o644 });
    }
    const chunks: Buffer[] = [];
    for await (const chunk of tar.c({ gzip: true, cwd: dir, portable: true }, ['package'])) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A package like a droid platform package: `bin/droid` is a shell script printing `prints`
 * for `--version`, plus `paddingBytes` of random (incompressible) data so a download takes
 * several chunks. The script is stored WITHOUT its executable bit, so the installer must set it.
 */
export function fakeBinaryFiles(options: {
  name: string;
  version: string;
  prints?: string;
  paddingBytes?: number;
}): Record<string, PackageFile> {
  const files: Record<string, PackageFile> = {
    'package.json': { content: JSON.stringify({ name: options.name, version: options.version }) },
    'bin/droid': { content: `#!/bin/sh\necho ${options.prints ?? options.version}\n` },
  };
  if (options.paddingBytes) files['bin/padding.bin'] = { content: randomBytes(options.paddingBytes) };
  return files;
}
