import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lockEntries, lockPathFor, readLock, recordProbe, type LockEntry } from '../../../core/config/index.js';
import { isOneWorksError } from '../../../core/errors.js';

let dir: string;
let lockPath: string;

const ENTRY: LockEntry = {
  facts: { protocolVersion: '1.220.0', apiVersion: '1.0.0' },
  integrity: 'sha512-abc',
  package: '@factory/cli-linux-x64',
  probedAt: '2025-01-02T03:04:05.000Z',
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'one-works-lock-'));
  lockPath = lockPathFor(join(dir, 'one-works.yaml'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('lock file', () => {
  it('lives next to the config file', () => {
    expect(lockPath).toBe(join(dir, 'one-works.lock'));
  });

  it('reads a missing lock as empty', async () => {
    expect(await readLock(lockPath)).toEqual({ lockfileVersion: 2, adapters: {} });
  });

  it('records probes with stable formatting, versions in semver order', async () => {
    await recordProbe(lockPath, 'droid', '0.225.2', ENTRY);
    await recordProbe(lockPath, 'droid', '0.99.0', {
      facts: { apiVersion: '1.0.0', protocolVersion: '1.100.0' },
      probedAt: '2025-01-01T00:00:00Z',
    });
    await recordProbe(lockPath, 'claude', '1.0.0', { facts: { claudeCodeVersion: '1.0.0' }, probedAt: '2025-01-02T03:04:05.000Z' });
    const text = await readFile(lockPath, 'utf8');
    expect(text).toBe(`{
  "lockfileVersion": 2,
  "adapters": {
    "claude": {
      "1.0.0": {
        "facts": {
          "claudeCodeVersion": "1.0.0"
        },
        "probedAt": "2025-01-02T03:04:05.000Z"
      }
    },
    "droid": {
      "0.99.0": {
        "facts": {
          "apiVersion": "1.0.0",
          "protocolVersion": "1.100.0"
        },
        "probedAt": "2025-01-01T00:00:00Z"
      },
      "0.225.2": {
        "facts": {
          "apiVersion": "1.0.0",
          "protocolVersion": "1.220.0"
        },
        "integrity": "sha512-abc",
        "package": "@factory/cli-linux-x64",
        "probedAt": "2025-01-02T03:04:05.000Z"
      }
    }
  }
}
`);
    expect(await readdir(dir)).toEqual(['one-works.lock']);
    const lock = await readLock(lockPath);
    expect(lockEntries(lock, 'droid').get('0.225.2')).toEqual(ENTRY);
    expect(lockEntries(lock, 'nobody').size).toBe(0);
  });

  it('replaces an earlier probe of the same version', async () => {
    await recordProbe(lockPath, 'droid', '0.225.2', ENTRY);
    const next = await recordProbe(lockPath, 'droid', '0.225.2', { ...ENTRY, facts: { apiVersion: '1.0.0', protocolVersion: '1.221.0' } });
    expect(next.adapters.droid?.['0.225.2']?.facts.protocolVersion).toBe('1.221.0');
    expect((await readLock(lockPath)).adapters.droid?.['0.225.2']?.facts.protocolVersion).toBe('1.221.0');
  });

  it('rejects a lock that is not JSON, naming the file', async () => {
    await writeFile(lockPath, '{ "lockfileVersion": 1, ');
    const error = await readLock(lockPath).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'lock_invalid')).toBe(true);
    expect((error as Error).message).toMatch(
      new RegExp(`^lock file ${lockPath} is malformed: not valid JSON \\(.+\\); fix it or delete it and probe again$`),
    );
  });

  it('rejects a lock with the wrong shape, naming the bad key', async () => {
    await writeFile(lockPath, JSON.stringify({ lockfileVersion: 2, adapters: { droid: { '0.225.2': { facts: { apiVersion: 1 } } } } }));
    const error = await readLock(lockPath).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'lock_invalid')).toBe(true);
    expect((error as Error).message).toContain(`lock file ${lockPath} is malformed: adapters.droid.0.225.2`);
  });

  it('rejects an unknown lockfileVersion and refuses to record over a malformed lock', async () => {
    await writeFile(lockPath, JSON.stringify({ lockfileVersion: 3, adapters: {} }));
    await expect(readLock(lockPath)).rejects.toThrow(/is malformed: lockfileVersion: /);
    const error = await recordProbe(lockPath, 'droid', '0.225.2', ENTRY).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'lock_invalid')).toBe(true);
    expect(JSON.parse(await readFile(lockPath, 'utf8'))).toEqual({ lockfileVersion: 3, adapters: {} });
  });
});

describe('a lock file written before version facts (lockfileVersion 1)', () => {
  const fixture = new URL('../../fixtures/lock/one-works.v1.lock', import.meta.url);

  it("reads droid's pair as version facts", async () => {
    await writeFile(lockPath, await readFile(fixture));
    const lock = await readLock(lockPath);
    expect(lockEntries(lock, 'droid').get('0.224.0')).toEqual({
      facts: { apiVersion: '1.0.0', protocolVersion: '1.219.0' },
      integrity: 'sha512-old',
      package: '@factory/cli-linux-x64',
      probedAt: '2025-11-02T10:00:00.000Z',
    });
  });

  it('keeps its entries when a new probe is recorded, rewritten in the new shape', async () => {
    await writeFile(lockPath, await readFile(fixture));
    await recordProbe(lockPath, 'droid', '0.225.2', ENTRY);
    const written = JSON.parse(await readFile(lockPath, 'utf8')) as { lockfileVersion: number; adapters: Record<string, unknown> };
    expect(written.lockfileVersion).toBe(2);
    expect(written.adapters.droid).toEqual({
      '0.224.0': {
        facts: { apiVersion: '1.0.0', protocolVersion: '1.219.0' },
        integrity: 'sha512-old',
        package: '@factory/cli-linux-x64',
        probedAt: '2025-11-02T10:00:00.000Z',
      },
      '0.225.2': { ...ENTRY, facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' } },
    });
  });
});
