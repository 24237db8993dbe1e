import { execFileSync } from 'node:child_process';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ssri from 'ssri';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProgressReport } from '../../../core/adapter.js';
import { INSTALL_MARKER, installPackage } from '../../../core/install/index.js';
import { buildTarball, fakeBinaryFiles, startRegistryStub } from '../../support/registry-stub.js';
import type { RegistryStub } from '../../support/registry-stub.js';
import { rejection, scratchDir, siblingsOf, stubRegistry } from './install-fixture.js';

const NAME = '@acme/tool-linux-x64';
const TOKEN = 'npm_secret-token-0123456789';

let stub: RegistryStub;
let tarball: Buffer;
let scratch: Awaited<ReturnType<typeof scratchDir>>;

beforeEach(async () => {
  tarball = await buildTarball(fakeBinaryFiles({ name: NAME, version: '1.2.3', paddingBytes: 64 * 1024 }));
  stub = await startRegistryStub({ packages: { [NAME]: { '1.2.3': { tarball }, '1.2.0': { tarball }, '2.0.0': { tarball } } } });
  scratch = await scratchDir();
});
afterEach(async () => {
  await stub.close();
  await scratch.remove();
});

function install(version = '1.2.3', extra: Partial<Parameters<typeof installPackage>[0]> = {}) {
  return installPackage({
    packageName: NAME,
    version,
    targetDir: path.join(scratch.root, 'cli', 'tool', version),
    binPath: 'bin/droid',
    registry: stubRegistry(stub),
    fetchOptions: { fetchRetries: 0 },
    ...extra,
  });
}

describe('installPackage', () => {
  it('installs the exact version, makes the binary executable and writes the marker', async () => {
    const result = await install();
    const targetDir = path.join(scratch.root, 'cli', 'tool', '1.2.3');
    expect(result).toEqual({
      dir: targetDir,
      binaryPath: path.join(targetDir, 'bin', 'droid'),
      integrity: ssri.fromData(tarball, { algorithms: ['sha512'] }).toString(),
      fromCache: false,
    });
    expect(execFileSync(result.binaryPath, ['--version'], { encoding: 'utf8' }).trim()).toBe('1.2.3');
    const marker = JSON.parse(await readFile(path.join(targetDir, INSTALL_MARKER), 'utf8'));
    expect(marker).toMatchObject({ package: NAME, version: '1.2.3', integrity: result.integrity, binPath: 'bin/droid' });
    expect(await siblingsOf(targetDir)).toEqual(['1.2.3']);
    expect(stub.requests.map((r) => r.path)).toEqual([`/${NAME}`, `/${NAME}/-/tool-linux-x64-1.2.3.tgz`]);
  });

  it('returns a complete install from the cache without any request', async () => {
    await install();
    const before = stub.requests.length;
    const seen: ProgressReport[] = [];
    const again = await install('1.2.3', { onProgress: (report) => seen.push(report) });
    expect(again.fromCache).toBe(true);
    expect(stub.requests.length).toBe(before);
    expect(seen.map((r) => r.phase)).toEqual(['done']);
  });

  it('reads registry settings given as a function only when it downloads', async () => {
    let reads = 0;
    const registry = async () => {
      reads += 1;
      return stubRegistry(stub);
    };
    expect((await install('1.2.3', { registry })).fromCache).toBe(false);
    expect(reads).toBe(1);
    // A cache hit (every session start of an installed CLI) reads no .npmrc.
    expect((await install('1.2.3', { registry })).fromCache).toBe(true);
    expect(reads).toBe(1);
  });

  it('reports resolve, download, verify, extract and done in order, with byte counts', async () => {
    const seen: ProgressReport[] = [];
    await install('1.2.3', { onProgress: (report) => seen.push(report) });
    const phases = seen.map((r) => r.phase).filter((phase, i, all) => phase !== all[i - 1]);
    expect(phases).toEqual(['resolve', 'download', 'verify', 'extract', 'done']);
    const downloads = seen.filter((r) => r.phase === 'download');
    expect(downloads.at(-1)).toMatchObject({ receivedBytes: tarball.length, totalBytes: tarball.length });
    expect(downloads[0]?.message).toBe(`downloading ${NAME}@1.2.3`);
  });

  it('refuses a range or dist-tag before any request', async () => {
    await rejection(install('latest'), 'install_not_found');
    await rejection(install('^1.2.0'), 'install_not_found');
    expect(stub.requests).toEqual([]);
  });

  it('maps an unknown package to install_not_found with E404', async () => {
    const error = await rejection(install('1.2.3', { packageName: '@acme/missing' }), 'install_not_found');
    expect(error.message).toBe(`package @acme/missing was not found on ${new URL(stub.url).host} (E404)`);
    expect(error.data).toMatchObject({ code: 'E404' });
  });

  it('maps an unpublished version to install_not_found naming the nearest versions, leaving nothing behind', async () => {
    const error = await rejection(install('1.5.0'), 'install_not_found');
    expect(error.message).toBe(`${NAME}@1.5.0 is not published; nearest published: 1.2.3, 2.0.0, 1.2.0`);
    expect(await siblingsOf(path.join(scratch.root, 'cli', 'tool', '1.5.0'))).toEqual([]);
  });

  it('refuses a version that declares runtime dependencies, naming them, before downloading anything', async () => {
    const wrapper = await buildTarball(fakeBinaryFiles({ name: '@acme/tool', version: '3.0.0' }));
    const deps = await startRegistryStub({
      packages: {
        '@acme/tool': {
          '3.0.0': { tarball: wrapper, dependencies: { '@acme/runtime': '^1.0.0', 'left-pad': '1.3.0' } },
        },
      },
    });
    try {
      const targetDir = path.join(scratch.root, 'cli', 'tool', '3.0.0');
      const error = await rejection(
        installPackage({
          packageName: '@acme/tool',
          version: '3.0.0',
          targetDir,
          binPath: 'bin/droid',
          registry: stubRegistry(deps),
          fetchOptions: { fetchRetries: 0 },
        }),
        'install_has_dependencies',
      );
      expect(error.message).toMatch(/^@acme\/tool@3\.0\.0 declares runtime dependencies \(@acme\/runtime@\^1\.0\.0, left-pad@1\.3\.0\); /);
      expect(error.data).toEqual({
        packageName: '@acme/tool',
        version: '3.0.0',
        dependencies: { '@acme/runtime': '^1.0.0', 'left-pad': '1.3.0' },
      });
      expect(deps.requests.map((r) => r.path)).toEqual(['/@acme/tool']);
      expect(await siblingsOf(targetDir)).toEqual([]);
    } finally {
      await deps.close();
    }
  });

  it('replaces a directory at the target that has no completion marker', async () => {
    const targetDir = path.join(scratch.root, 'cli', 'tool', '1.2.3');
    await mkdir(path.join(targetDir, 'bin'), { recursive: true });
    await writeFile(path.join(targetDir, 'bin', 'droid'), 'half written');
    const result = await install();
    expect(result.fromCache).toBe(false);
    expect(execFileSync(result.binaryPath, ['--version'], { encoding: 'utf8' }).trim()).toBe('1.2.3');
    expect(await siblingsOf(targetDir)).toEqual(['1.2.3']);
  });

  it('lets concurrent installs of one version both succeed on a single published directory', async () => {
    const [a, b] = await Promise.all([install(), install()]);
    expect(a.dir).toBe(b.dir);
    expect([a.fromCache, b.fromCache]).toEqual([false, false]);
    expect(stub.requests.filter((r) => r.path.endsWith('.tgz'))).toHaveLength(2);
    expect(execFileSync(a.binaryPath, ['--version'], { encoding: 'utf8' }).trim()).toBe('1.2.3');
    expect(await siblingsOf(a.dir)).toEqual(['1.2.3']);
    expect((await stat(a.binaryPath)).mode & 0o111).toBe(0o111);
  });
});

describe('installPackage with registry auth', () => {
  let authStub: RegistryStub;

  beforeEach(async () => {
    authStub = await startRegistryStub({ packages: { [NAME]: { '1.2.3': { tarball } } }, requireToken: TOKEN });
  });
  afterEach(async () => {
    await authStub.close();
  });

  const nerfDart = (): string => `//${new URL(authStub.url).host}/`;

  it('sends the .npmrc token for the registry host', async () => {
    const result = await install('1.2.3', { registry: stubRegistry(authStub, { [nerfDart()]: TOKEN }) });
    expect(result.fromCache).toBe(false);
    expect(authStub.requests.every((r) => r.authorization === `Bearer ${TOKEN}`)).toBe(true);
  });

  it('maps a rejected token to install_failed with E401 and never shows the token', async () => {
    const wrong = `${TOKEN}-wrong`;
    const error = await rejection(install('1.2.3', { registry: stubRegistry(authStub, { [nerfDart()]: wrong }) }), 'install_failed');
    expect(error.data).toMatchObject({ code: 'E401' });
    expect(error.message).toContain('HTTP 401');
    expect(`${error.message} ${JSON.stringify(error.data)}`).not.toContain(TOKEN);
  });
});
