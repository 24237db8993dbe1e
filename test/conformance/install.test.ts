import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DROID_CLI } from '../../adapters/droid/cli-source.js';
import { createPrepareServices, detectPlatform, resolveCli, selectPlatformPackage } from '../../core/install/index.js';

// Integrity of the real platform packages as published (npm view <pkg>@<version> dist.integrity).
// A change here means the registry serves different bytes for a pinned version: investigate.
const PUBLISHED_INTEGRITY: Record<string, string> = {
  '@factory/cli-linux-x64@0.225.2': 'sha512-1ctPmJwAqs0s/QNiaFp6vxr90AQa7j3VgFzLns9OaTffzOCd4csExNpL4w99tNlBLmQbbYqp0rUHlAhoD8R31A==',
  '@factory/cli-linux-x64@0.215.0': 'sha512-e2dUrVvT3mSKrvJTpYtJk6fM6tf51nXh+bjS5rbC9FaZhWNCTV7q3UpZpopzsGYPSJL/dBEG+qhevzGPWL0ZjQ==',
  '@factory/cli-linux-x64-baseline@0.225.2':
    'sha512-dA4r2ZAGXAQCHxmSfuEmIVjetvbteRJxEIkwSx0bh8rgW2rUu4R/xdhD+Rjq2MQgfBa8sLWnHK8pcXPQ6UZhAQ==',
};

let cacheDir: string;

beforeAll(async () => {
  cacheDir = await mkdtemp(path.join(tmpdir(), 'ow-conf-install-'));
});
afterAll(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

const packageName = selectPlatformPackage(DROID_CLI, detectPlatform());

describe.each([
  { version: '0.225.2', protocolVersion: '1.220.0' },
  { version: '0.215.0', protocolVersion: '1.206.0' },
])('managed droid $version from the real registry', ({ version, protocolVersion }) => {
  const ctx = () => ({ services: createPrepareServices(), cacheDir, lock: new Map(), env: process.env });

  it('installs the platform package, verifies it and checks --version', async () => {
    const resolved = await resolveCli({ source: 'managed', version }, DROID_CLI, ctx());
    const versionDir = path.join(cacheDir, 'cli', 'droid', version);
    expect(resolved).toMatchObject({
      source: 'managed',
      binaryPath: path.join(versionDir, 'bin', process.platform === 'win32' ? 'droid.exe' : 'droid'),
      version,
      expected: { facts: { apiVersion: '1.0.0', protocolVersion }, qualifiedBy: 'table' },
      package: { name: packageName, fromCache: false },
    });
    const published = PUBLISHED_INTEGRITY[`${packageName}@${version}`];
    expect(published, `no recorded integrity for ${packageName}@${version}`).toBeDefined();
    expect(resolved.package?.integrity).toBe(published);
    const siblings = (await readdir(path.dirname(versionDir))).filter((name) => name.startsWith(version));
    expect(siblings).toEqual([version]);
  });

  it('serves the second resolution from the cache', async () => {
    const resolved = await resolveCli({ source: 'managed', version }, DROID_CLI, ctx());
    expect(resolved.version).toBe(version);
    expect(resolved.package?.fromCache).toBe(true);
  });
});
