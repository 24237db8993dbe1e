import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deferCaCerts, DEFERRED_CA_CERTS_VAR, restoreDeferredCaCerts } from '../../../core/install/index.js';
import type { InstallChildArgs } from '../../support/install-child.js';
import { buildTarball, fakeBinaryFiles, startRegistryStub, type RegistryStub } from '../../support/registry-stub.js';
import { scratchDir } from './install-fixture.js';

const NAME = '@acme/tool-linux-x64';
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHILD_SCRIPT = path.join(REPO_ROOT, 'test', 'support', 'install-child.ts');
const TLS_DIR = path.join(REPO_ROOT, 'test', 'fixtures', 'tls');
const CERT = path.join(TLS_DIR, 'loopback-test-only.crt');

describe('deferCaCerts / restoreDeferredCaCerts', () => {
  it('moves NODE_EXTRA_CA_CERTS aside for the start and puts it back, leaving the rest of the environment as it was', () => {
    const env = { PATH: '/bin', NODE_EXTRA_CA_CERTS: '/etc/ca.pem', HOME: '/h' };
    const deferred = deferCaCerts(env);
    expect(deferred).toEqual({ PATH: '/bin', HOME: '/h', [DEFERRED_CA_CERTS_VAR]: '/etc/ca.pem' });
    expect(env.NODE_EXTRA_CA_CERTS).toBe('/etc/ca.pem');
    restoreDeferredCaCerts(deferred);
    expect(deferred).toEqual({ PATH: '/bin', HOME: '/h', NODE_EXTRA_CA_CERTS: '/etc/ca.pem' });
  });

  it('defers nothing without the variable, or when NODE_OPTIONS chooses the CA store', () => {
    const plain = { PATH: '/bin' };
    expect(deferCaCerts(plain)).toBe(plain);
    const empty = { NODE_EXTRA_CA_CERTS: '' };
    expect(deferCaCerts(empty)).toBe(empty);
    const openssl = { NODE_EXTRA_CA_CERTS: '/etc/ca.pem', NODE_OPTIONS: '--use-openssl-ca' };
    expect(deferCaCerts(openssl)).toBe(openssl);
  });
});

// The promise from the user's side: an installer in a process started with its extra CA
// certificates deferred trusts them as if Node had loaded them at its start, against a real
// HTTPS registry whose certificate only NODE_EXTRA_CA_CERTS makes trusted.
describe('an install over HTTPS in a process whose start deferred NODE_EXTRA_CA_CERTS', () => {
  let stub: RegistryStub;
  let scratch: Awaited<ReturnType<typeof scratchDir>>;

  beforeEach(async () => {
    const tarball = await buildTarball(fakeBinaryFiles({ name: NAME, version: '1.2.3' }));
    const [key, cert] = await Promise.all([readFile(path.join(TLS_DIR, 'loopback-test-only.key'), 'utf8'), readFile(CERT, 'utf8')]);
    stub = await startRegistryStub({ packages: { [NAME]: { '1.2.3': { tarball } } }, tls: { key, cert } });
    scratch = await scratchDir();
  });
  afterEach(async () => {
    await stub.close();
    await scratch.remove();
  });

  // Runs one install in a child with `env` (on top of this process's, without its own CA variables).
  async function install(dir: string, env: NodeJS.ProcessEnv, restoreDeferredCa: boolean): Promise<{ code: number | null; out: string }> {
    const args: InstallChildArgs = {
      registryUrl: stub.url,
      packageName: NAME,
      version: '1.2.3',
      targetDir: path.join(scratch.root, dir, '1.2.3'),
      binPath: 'bin/droid',
      restoreDeferredCa,
    };
    const { NODE_EXTRA_CA_CERTS: _own, [DEFERRED_CA_CERTS_VAR]: _deferred, ...base } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD_SCRIPT, JSON.stringify(args)], {
      cwd: REPO_ROOT,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    return { code, out };
  }

  it('succeeds as with the variable at start, and fails without the certificates handed to it', async () => {
    const atStart = await install('at-start', { NODE_EXTRA_CA_CERTS: CERT }, false);
    expect(atStart.out).toMatch(/"phase":"done"/);
    expect(atStart.code).toBe(0);

    const deferred = await install('deferred', deferCaCerts({ NODE_EXTRA_CA_CERTS: CERT }), true);
    expect(deferred.out).toMatch(/"phase":"done"/);
    expect(deferred.code).toBe(0);

    // The same deferred start, with the variable never put back: the registry's certificate is not trusted.
    const notRestored = await install('not-restored', deferCaCerts({ NODE_EXTRA_CA_CERTS: CERT }), false);
    expect(notRestored.out).toMatch(/"error":"install_failed"/);
    expect(notRestored.code).toBe(1);
  }, 60_000);
});
