import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DROID_CLI, parseDroidVersion } from '../../../adapters/droid/cli-source.js';
import type { CliSelection, PrepareContext, ResolvedCli } from '../../../core/adapter.js';
import { type CheckCliVersionOptions, checkCliVersion as coreCheckCliVersion, createPrepareServices } from '../../../core/install/index.js';
import { OneWorksError } from '../../../core/errors.js';
import type { ErrorCode } from '../../../core/errors.js';
import { buildTarball, fakeBinaryFiles, startRegistryStub } from '../../support/registry-stub.js';
import type { RegistryStub } from '../../support/registry-stub.js';

let root: string;
let bin: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'ow-cli-source-'));
  bin = path.join(root, 'bin');
  await mkdir(bin);
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

// A fake droid: a shell script answering --version with `prints`.
async function fakeDroid(dir: string, prints: string, body = ''): Promise<string> {
  const file = path.join(dir, 'droid');
  await writeFile(file, `#!/bin/sh\n${body}echo ${prints}\n`, { mode: 0o755 });
  return file;
}

// The droid adapter's declaration through core's one resolver, reached as the adapter reaches it.
function resolveDroidCli(selection: CliSelection, ctx: PrepareContext): Promise<ResolvedCli> {
  return ctx.services.resolveCli(selection, DROID_CLI, ctx);
}

function checkCliVersion(
  binary: string,
  range: string,
  options: Omit<CheckCliVersionOptions, 'displayName' | 'parseVersion'>,
): Promise<string> {
  return coreCheckCliVersion(binary, range, { ...options, displayName: 'droid', parseVersion: parseDroidVersion });
}

function context(env: Record<string, string | undefined> = { PATH: '/usr/bin:/bin' }): PrepareContext {
  return { services: createPrepareServices(), cacheDir: path.join(root, 'cache'), lock: new Map(), env };
}

async function rejection(promise: Promise<unknown>, code: ErrorCode): Promise<OneWorksError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OneWorksError);
  expect((error as OneWorksError).code).toBe(code);
  return error as OneWorksError;
}

const pinned: Omit<CliSelection, 'source'> = { version: '0.225.2' };

describe('resolveDroidCli with source: path', () => {
  it('refuses a binary outside the pinned minor line, naming path, version and range', async () => {
    const droid = await fakeDroid(bin, '0.215.0');
    const error = await rejection(resolveDroidCli({ source: 'path', path: droid, ...pinned }, context()), 'unsupported_cli_version');
    expect(error.message.split('\n')[0]).toBe(
      `droid at ${droid} is 0.215.0, outside the pinned range >=0.225.0 <0.226.0 (adapters.droid.cli.version 0.225.2)`,
    );
    expect(error.data).toEqual({ binaryPath: droid, version: '0.215.0', range: '>=0.225.0 <0.226.0' });
  });

  it('accepts another patch of the pinned line and fills expected from the table', async () => {
    const droid = await fakeDroid(bin, '0.225.1');
    const resolved = await resolveDroidCli({ source: 'path', path: droid, ...pinned }, context());
    expect(resolved).toEqual({
      source: 'path',
      binaryPath: droid,
      version: '0.225.1',
      range: '>=0.225.0 <0.226.0',
      expected: { facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' }, qualifiedBy: 'table' },
    });
  });

  it('checks a configured range instead of the default one and names it', async () => {
    const droid = await fakeDroid(bin, '0.230.0');
    const lock = new Map([['0.230.0', { facts: { apiVersion: '1.0.0', protocolVersion: '1.230.0' } }]]);
    const ok = await resolveDroidCli(
      { source: 'path', path: droid, version: '0.225.2', range: '>=0.225.0 <0.231.0' },
      { ...context(), lock },
    );
    expect(ok.expected).toEqual({ facts: { apiVersion: '1.0.0', protocolVersion: '1.230.0' }, qualifiedBy: 'lock' });
    const error = await rejection(
      resolveDroidCli({ source: 'path', path: droid, version: '0.225.2', range: '>=0.225.0 <0.226.0 || 0.215.x' }, context()),
      'unsupported_cli_version',
    );
    expect(error.message.split('\n')[0]).toMatch(/\(adapters\.droid\.cli\.range >=0\.225\.0 <0\.226\.0 \|\| 0\.215\.x\)$/);
  });

  it('reports a missing binary as cli_not_found', async () => {
    const missing = path.join(bin, 'droid');
    const error = await rejection(resolveDroidCli({ source: 'path', path: missing, ...pinned }, context()), 'cli_not_found');
    expect(error.message).toContain(`droid at ${missing} does not exist`);
  });

  it('reports a file without the executable bit as cli_not_found', async () => {
    const droid = path.join(bin, 'droid');
    await writeFile(droid, '#!/bin/sh\necho 0.225.2\n', { mode: 0o644 });
    const error = await rejection(resolveDroidCli({ source: 'path', path: droid, ...pinned }, context()), 'cli_not_found');
    expect(error.message).toContain('is not an executable file');
  });
});

describe('resolveDroidCli with source: system', () => {
  it('refuses the droid found on PATH when it is outside the pinned range', async () => {
    const droid = await fakeDroid(bin, '0.215.0');
    const error = await rejection(
      resolveDroidCli({ source: 'system', ...pinned }, context({ PATH: `${path.join(root, 'empty')}:${bin}:/usr/bin:/bin` })),
      'unsupported_cli_version',
    );
    expect(error.message.split('\n')[0]).toBe(
      `droid at ${droid} is 0.215.0, outside the pinned range >=0.225.0 <0.226.0 (adapters.droid.cli.version 0.225.2)`,
    );
  });

  it('uses the first executable droid on PATH', async () => {
    const droid = await fakeDroid(bin, '0.225.2');
    const resolved = await resolveDroidCli({ source: 'system', ...pinned }, context({ PATH: `${bin}:/usr/bin:/bin` }));
    expect(resolved).toMatchObject({ source: 'system', binaryPath: droid, version: '0.225.2' });
  });

  it('says how to fix a droid missing from PATH', async () => {
    const error = await rejection(resolveDroidCli({ source: 'system', ...pinned }, context({ PATH: bin })), 'cli_not_found');
    expect(error.message).toContain('droid was not found on PATH');
    expect(error.message).toContain('source: managed');
  });
});

describe('resolveDroidCli with source: managed', () => {
  let stub: RegistryStub;

  beforeEach(async () => {
    const packages: Record<string, Record<string, { tarball: Buffer }>> = {};
    for (const name of ['@factory/cli-linux-x64', '@factory/cli-linux-x64-baseline']) {
      packages[name] = { '0.225.2': { tarball: await buildTarball(fakeBinaryFiles({ name, version: '0.225.2' })) } };
    }
    stub = await startRegistryStub({ packages });
  });
  afterEach(async () => {
    await stub.close();
  });

  function managedContext(hasAvx2: boolean): PrepareContext {
    return {
      ...context(),
      registry: { registry: stub.url, scopes: {}, authTokens: {} },
      fetchOptions: { fetchRetries: 0 },
      platform: { platform: 'linux', arch: 'x64', libc: 'glibc', hasAvx2 },
    };
  }

  it('installs the platform package into <cache>/cli/droid/<version> and checks it, then reuses it', async () => {
    const phases: string[] = [];
    const ctx = { ...managedContext(true), onProgress: (report: { phase: string }) => phases.push(report.phase) };
    const first = await resolveDroidCli({ source: 'managed', ...pinned }, ctx);
    expect(first).toMatchObject({
      source: 'managed',
      binaryPath: path.join(root, 'cache', 'cli', 'droid', '0.225.2', 'bin', 'droid'),
      version: '0.225.2',
      range: '>=0.225.0 <0.226.0',
      expected: { facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' }, qualifiedBy: 'table' },
      package: { name: '@factory/cli-linux-x64', fromCache: false },
    });
    expect(first.package?.integrity).toMatch(/^sha512-/);
    expect(phases.at(-1)).toBe('check');
    const requests = stub.requests.length;
    const second = await resolveDroidCli({ source: 'managed', ...pinned }, ctx);
    expect(second.package?.fromCache).toBe(true);
    expect(stub.requests.length).toBe(requests);
  });

  it('takes the baseline package on a CPU without AVX2', async () => {
    const resolved = await resolveDroidCli({ source: 'managed', ...pinned }, managedContext(false));
    expect(resolved.package?.name).toBe('@factory/cli-linux-x64-baseline');
    expect(stub.requests.map((r) => r.path)[0]).toBe('/@factory/cli-linux-x64-baseline');
  });

  it('passes the installer error through when the pin is not published', async () => {
    const error = await rejection(resolveDroidCli({ source: 'managed', version: '0.215.0' }, managedContext(false)), 'install_not_found');
    expect(error.message).toBe('@factory/cli-linux-x64-baseline@0.215.0 is not published; nearest published: 0.225.2');
  });
});

describe('checkCliVersion', () => {
  it('runs --version with only PATH and a throwaway HOME that is removed afterwards', async () => {
    const record = path.join(root, 'env.txt');
    const droid = await fakeDroid(bin, '0.225.2', `env > ${record}\n`);
    expect(
      await checkCliVersion(droid, '>=0.225.0 <0.226.0', {
        services: createPrepareServices(),
        env: { PATH: '/usr/bin:/bin', SECRET_TOKEN: 'x' },
      }),
    ).toBe('0.225.2');
    const vars = new Map(
      (await readFile(record, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const),
    );
    // The shell itself adds PWD (and some shells SHLVL / _); nothing else may appear.
    expect([...vars.keys()].filter((key) => !['PWD', 'SHLVL', '_'].includes(key)).sort()).toEqual(['HOME', 'PATH']);
    expect(vars.get('PATH')).toBe('/usr/bin:/bin');
    const home = vars.get('HOME') ?? '';
    expect(path.basename(home)).toMatch(/^one-works-version-/);
    await expect(stat(home)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('fails with probe_failed when no version comes out', async () => {
    const garbage = await fakeDroid(bin, 'hello');
    const error = await rejection(checkCliVersion(garbage, '>=0.225.0 <0.226.0', { services: createPrepareServices() }), 'probe_failed');
    expect(error.message).toBe(`droid at ${garbage} printed no version for --version; it printed "hello" on stdout`);
  });

  it('fails with probe_failed when --version exits non-zero', async () => {
    const failing = await fakeDroid(bin, '0.225.2', 'echo broken >&2\nexit 2\n');
    const error = await rejection(checkCliVersion(failing, '>=0.225.0 <0.226.0', { services: createPrepareServices() }), 'probe_failed');
    expect(error.message).toBe(
      `droid at ${failing} exited with status 2 on --version; it printed nothing on stdout and "broken" on stderr`,
    );
    expect(error.data).toMatchObject({ exitCode: 2, stderr: 'broken' });
  });
});

describe('resolveDroidCli with reuseVersionCheck (run, send, the orchestrator)', () => {
  it('asks a binary its version once and reuses the answer until the file changes', async () => {
    const marker = path.join(root, 'asked');
    const droid = await fakeDroid(bin, '0.225.1', `echo x >> ${marker}\n`);
    const asked = async () => (await readFile(marker, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    const reusing = { ...context(), reuseVersionCheck: true };
    expect((await resolveDroidCli({ source: 'path', path: droid, ...pinned }, reusing)).version).toBe('0.225.1');
    expect((await resolveDroidCli({ source: 'path', path: droid, ...pinned }, reusing)).version).toBe('0.225.1');
    expect(await asked()).toBe(1);
    // Without the option (doctor, probes) the binary is always asked.
    await resolveDroidCli({ source: 'path', path: droid, ...pinned }, context());
    expect(await asked()).toBe(2);
    // Replaced in place by another version: asked again, and the new answer is checked against the range.
    await fakeDroid(bin, '0.215.0', `echo x >> ${marker}\n`);
    await rejection(resolveDroidCli({ source: 'path', path: droid, ...pinned }, reusing), 'unsupported_cli_version');
    expect(await asked()).toBe(3);
  });

  it('with versionCheck false (the orchestrator in idle time) uses only a recorded answer and never asks the binary', async () => {
    const marker = path.join(root, 'asked');
    const droid = await fakeDroid(bin, '0.225.1', `echo x >> ${marker}\n`);
    const asked = async () => (await readFile(marker, 'utf8').catch(() => '')).split('\n').filter(Boolean).length;
    const idle = { ...context(), reuseVersionCheck: true, versionCheck: false };
    const refused = await rejection(resolveDroidCli({ source: 'path', path: droid, ...pinned }, idle), 'probe_failed');
    expect(refused.message).toBe(
      `the version of droid at ${droid} is not recorded on this machine, and this preparation runs no --version`,
    );
    expect(await asked()).toBe(0);
    // Once a session's preparation asked it, the answer serves.
    await resolveDroidCli({ source: 'path', path: droid, ...pinned }, { ...context(), reuseVersionCheck: true });
    expect((await resolveDroidCli({ source: 'path', path: droid, ...pinned }, idle)).version).toBe('0.225.1');
    expect(await asked()).toBe(1);
  });
});
