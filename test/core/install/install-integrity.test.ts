import path from 'node:path';
import ssri from 'ssri';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installPackage } from '../../../core/install/index.js';
import { buildTarball, fakeBinaryFiles, startRegistryStub } from '../../support/registry-stub.js';
import type { RegistryStub } from '../../support/registry-stub.js';
import { rejection, scratchDir, siblingsOf, stubRegistry } from './install-fixture.js';

const NAME = '@acme/tool-linux-x64';

let stub: RegistryStub | undefined;
let scratch: Awaited<ReturnType<typeof scratchDir>>;

beforeEach(async () => {
  scratch = await scratchDir();
});
afterEach(async () => {
  await stub?.close();
  stub = undefined;
  await scratch.remove();
});

// Publishes `served` while the packument claims the integrity of `original`.
async function installTampered(original: Buffer, served: Buffer) {
  const integrity = ssri.fromData(original, { algorithms: ['sha512'] }).toString();
  stub = await startRegistryStub({ packages: { [NAME]: { '1.2.3': { tarball: served, integrity } } } });
  const targetDir = path.join(scratch.root, 'cli', 'tool', '1.2.3');
  const outcome = installPackage({
    packageName: NAME,
    version: '1.2.3',
    targetDir,
    binPath: 'bin/droid',
    registry: stubRegistry(stub),
    fetchOptions: { fetchRetries: 0 },
  });
  return { integrity, targetDir, outcome };
}

describe('installPackage integrity', () => {
  it('rejects a well-formed tarball whose bytes differ from dist.integrity, leaving no target and no temp dir', async () => {
    const original = await buildTarball(fakeBinaryFiles({ name: NAME, version: '1.2.3' }));
    const tampered = await buildTarball(fakeBinaryFiles({ name: NAME, version: '1.2.3', prints: 'pwned' }));
    const { integrity, targetDir, outcome } = await installTampered(original, tampered);
    const error = await rejection(outcome, 'install_integrity');
    const got = ssri.fromData(tampered, { algorithms: ['sha512'] }).toString();
    expect(error.message).toBe(`${NAME}@1.2.3 failed its integrity check: expected ${integrity}, got ${got}`);
    expect(error.data).toMatchObject({ packageName: NAME, version: '1.2.3', algorithm: 'sha512' });
    expect(await siblingsOf(targetDir)).toEqual([]);
  });

  it('reports the digest mismatch, not the unpack error, when flipped bytes also break the archive', async () => {
    const original = await buildTarball(fakeBinaryFiles({ name: NAME, version: '1.2.3', paddingBytes: 256 * 1024 }));
    const corrupted = Buffer.from(original);
    for (let i = 2_000; i < 2_064; i++) corrupted[i] = (corrupted[i] ?? 0) ^ 0xff;
    const { targetDir, outcome } = await installTampered(original, corrupted);
    await rejection(outcome, 'install_integrity');
    expect(await siblingsOf(targetDir)).toEqual([]);
  });
});
