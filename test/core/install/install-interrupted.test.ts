import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProgressReport } from '../../../core/adapter.js';
import { installPackage } from '../../../core/install/index.js';
import type { InstallChildArgs } from '../../support/install-child.js';
import { buildTarball, fakeBinaryFiles, startRegistryStub } from '../../support/registry-stub.js';
import type { RegistryStub } from '../../support/registry-stub.js';
import { rejection, scratchDir, siblingsOf, stubRegistry } from './install-fixture.js';

const NAME = '@acme/tool-linux-x64';
const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CHILD_SCRIPT = path.join(REPO_ROOT, 'test', 'support', 'install-child.ts');

let stub: RegistryStub;
let scratch: Awaited<ReturnType<typeof scratchDir>>;
let targetDir: string;

beforeEach(async () => {
  const tarball = await buildTarball(fakeBinaryFiles({ name: NAME, version: '1.2.3', paddingBytes: 512 * 1024 }));
  stub = await startRegistryStub({ packages: { [NAME]: { '1.2.3': { tarball } } } });
  stub.stallAfterBytes = 128 * 1024;
  scratch = await scratchDir();
  targetDir = path.join(scratch.root, 'cli', 'tool', '1.2.3');
});
afterEach(async () => {
  await stub.close();
  await scratch.remove();
});

function installInProcess(extra: Partial<Parameters<typeof installPackage>[0]> = {}) {
  return installPackage({
    packageName: NAME,
    version: '1.2.3',
    targetDir,
    binPath: 'bin/droid',
    registry: stubRegistry(stub),
    fetchOptions: { fetchRetries: 0 },
    ...extra,
  });
}

describe('an interrupted install', () => {
  it('leaves no target when the installing process is SIGKILLed mid-download; the next install cleans up and succeeds', async () => {
    const args: InstallChildArgs = { registryUrl: stub.url, packageName: NAME, version: '1.2.3', targetDir, binPath: 'bin/droid' };
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD_SCRIPT, JSON.stringify(args)], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
    try {
      // Wait until bytes have arrived and the stub has stalled the rest of the tarball.
      for await (const line of createInterface({ input: child.stdout })) {
        const report = JSON.parse(line) as ProgressReport & { error?: string };
        if (report.error) throw new Error(`the child failed before the kill: ${report.error}`);
        if (report.phase === 'download' && (report.receivedBytes ?? 0) > 0) break;
      }
      const staging = await siblingsOf(targetDir);
      expect(staging).toEqual([expect.stringMatching(new RegExp(`^1\\.2\\.3\\.tmp-${child.pid}-[0-9a-f]+$`))]);
    } finally {
      child.kill('SIGKILL');
    }
    expect(await exited).toBe('SIGKILL');
    expect(() => process.kill(child.pid ?? -1, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
    const left = await siblingsOf(targetDir);
    expect(left).not.toContain('1.2.3');
    expect(left).toHaveLength(1);

    stub.stallAfterBytes = undefined;
    const result = await installInProcess();
    expect(result.fromCache).toBe(false);
    expect(await siblingsOf(targetDir)).toEqual(['1.2.3']);
  });

  it('rejects with request_cancelled when aborted mid-download and removes its temp dir', async () => {
    const controller = new AbortController();
    const outcome = installInProcess({
      signal: controller.signal,
      onProgress: (report) => {
        if (report.phase === 'download' && (report.receivedBytes ?? 0) > 0) controller.abort();
      },
    });
    await rejection(outcome, 'request_cancelled');
    expect(await siblingsOf(targetDir)).toEqual([]);
  });
});
