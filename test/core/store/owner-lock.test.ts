import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import { spawnChild, type ChildHandle } from '../../../core/process/index.js';
import { createFileStore, ownerRecordOfThisProcess, processIdentity, type FileStore, type OwnerRecord } from '../../../core/store/index.js';
import { firstLine, nodeFixture, probe } from '../process/process-helpers.js';
import { permissions, tempState } from './store-helpers.js';

let stateDir: string;
let cleanup: () => Promise<void>;
let store: FileStore;
let other: ChildHandle | undefined;

const me: OwnerRecord = { pid: process.pid, host: hostname(), startedAt: '2025-01-01T00:00:00.000Z' };

beforeEach(async () => {
  ({ stateDir, cleanup } = await tempState());
  store = await createFileStore(stateDir);
});

afterEach(async () => {
  await other?.stop('shutdown', { graceMs: 200 });
  other = undefined;
  await cleanup();
});

// Another live process on this host: a fixture child this test starts and ends.
async function liveOtherPid(): Promise<number> {
  other = await spawnChild(nodeFixture('forever.js', ['--allow-term']));
  await firstLine(other.stdout);
  return other.pid;
}

async function writeOwner(owner: OwnerRecord): Promise<void> {
  await writeFile(path.join(stateDir, 'owner.json'), JSON.stringify(owner));
}

describe('owner lock', () => {
  it('takes a free state directory, writing owner.json 0600 with no temp files left', async () => {
    expect(await store.acquireOwner(me)).toEqual({ recovered: false });
    const file = path.join(stateDir, 'owner.json');
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual(me);
    expect(permissions((await stat(file)).mode)).toBe(0o600);
    expect((await readdir(stateDir)).sort()).toEqual(['owner.json', 'sessions']);
  });

  it('refuses while another live process owns it, naming the pid and what to do', async () => {
    const pid = await liveOtherPid();
    const identity = processIdentity(pid)!;
    await writeOwner({ pid, host: me.host, startedAt: new Date().toISOString(), procStart: identity.startTicks, bootId: identity.bootId });
    const error = await store.acquireOwner(me).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'state_locked')).toBe(true);
    expect((error as Error).message).toContain(`pid ${pid}`);
    expect((error as Error).message).toContain('owner.json');
    // The refused claim's temp file went with it; the owner's file is as it was.
    expect((await readdir(stateDir)).sort()).toEqual(['owner.json', 'sessions']);
    expect(JSON.parse(await readFile(path.join(stateDir, 'owner.json'), 'utf8')).pid).toBe(pid);
  });

  it('recovers from an owner whose process is gone', async () => {
    const pid = await liveOtherPid();
    await other!.stop('shutdown', { graceMs: 200 });
    expect(probe(pid)).toBe('ESRCH');
    const stale = { pid, host: me.host, startedAt: '2024-12-31T00:00:00.000Z' };
    await writeOwner(stale);
    expect(await store.acquireOwner(me)).toEqual({ recovered: true, previous: stale });
    expect(JSON.parse(await readFile(path.join(stateDir, 'owner.json'), 'utf8'))).toEqual(me);
  });

  // Pid reuse (after a reboot, or a long uptime): the owner file names a pid that now belongs to
  // an unrelated process. kill(pid, 0) succeeds; the identity check tells it apart.
  describe('a stale owner file naming a live unrelated pid', () => {
    it('is recovered when the record carries another start time of that pid', async () => {
      const pid = await liveOtherPid();
      const identity = processIdentity(pid)!;
      const stale = { pid, host: me.host, startedAt: '2025-01-01T00:00:00.000Z', procStart: '1', bootId: identity.bootId };
      await writeOwner(stale);
      expect(probe(pid)).toBeUndefined(); // alive: kill(pid, 0) alone would call it the owner
      expect(await store.acquireOwner(me)).toEqual({ recovered: true, previous: stale });
    });

    it('is recovered when the record comes from another boot', async () => {
      const pid = await liveOtherPid();
      const identity = processIdentity(pid)!;
      const stale = { pid, host: me.host, startedAt: new Date().toISOString(), procStart: identity.startTicks, bootId: 'another-boot' };
      await writeOwner(stale);
      expect(await store.acquireOwner(me)).toEqual({ recovered: true, previous: stale });
    });

    it('is recovered from a record without identity (older One Works) when the process started after it', async () => {
      const pid = await liveOtherPid();
      const stale = { pid, host: me.host, startedAt: '2025-01-01T00:00:00.000Z' };
      await writeOwner(stale);
      expect(await store.acquireOwner(me)).toEqual({ recovered: true, previous: stale });
    });

    it('still refuses a record without identity whose process may have written it', async () => {
      const pid = await liveOtherPid();
      await writeOwner({ pid, host: me.host, startedAt: new Date(Date.now() + 60_000).toISOString() });
      expect(isOneWorksError(await store.acquireOwner(me).catch((e: unknown) => e), 'state_locked')).toBe(true);
    });
  });

  it('writes the identity of this process with ownerRecordOfThisProcess, and a second store refuses it', async () => {
    const mine = ownerRecordOfThisProcess();
    expect(mine).toMatchObject({ pid: process.pid, procStart: processIdentity(process.pid)!.startTicks });
    await store.acquireOwner(mine);
    const second = await createFileStore(stateDir);
    expect(isOneWorksError(await second.acquireOwner(me).catch((e: unknown) => e), 'state_locked')).toBe(true);
  });

  it('refuses an owner on another host, whose pid cannot be checked', async () => {
    await writeOwner({ pid: 999_999, host: 'elsewhere.example', startedAt: '2025-01-01T00:00:00.000Z' });
    const error = await store.acquireOwner(me).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'state_locked')).toBe(true);
    expect((error as Error).message).toContain('elsewhere.example');
  });

  it('reports a malformed owner file as state_corrupt', async () => {
    await writeFile(path.join(stateDir, 'owner.json'), 'not json');
    const error = await store.acquireOwner(me).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'state_corrupt')).toBe(true);
  });

  it('releases only its own claim', async () => {
    await store.acquireOwner(me);
    await store.releaseOwner();
    expect(await readdir(stateDir)).toEqual(['sessions']);
    const second = await createFileStore(stateDir);
    await second.acquireOwner(me);
    await store.releaseOwner();
    expect(await readdir(stateDir)).toContain('owner.json');
  });

  it('lets the next process in after a release', async () => {
    await store.acquireOwner(me);
    await store.releaseOwner();
    const next = await createFileStore(stateDir);
    expect(await next.acquireOwner({ ...me, startedAt: '2025-01-02T00:00:00.000Z' })).toEqual({ recovered: false });
  });
});
