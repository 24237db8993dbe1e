import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_CONTRACT_VERSION, type Adapter, type AdapterSession, type SessionSpec } from '../../../core/adapter.js';
import { OneWorksError } from '../../../core/errors.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import { SessionRunner, type SessionRuntime } from '../../../core/session/index.js';
import { createFileStore } from '../../../core/store/index.js';
import { checkFakeFacts, FAKE_CLI } from '../../support/fake-adapter.js';

// SessionRunner.renameNative over a stub adapter: true only when the adapter confirmed; false
// (logged, never thrown) for a missing rename, a failure, a deadline, or a closed runner; the
// record and its turns are never touched. Tags reach the adapter's spec and the record's labels.

const SECRET = 'sk-runner-secret-777';
const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

type Rename = AdapterSession['rename'];

async function runtimeWith(rename: Rename | undefined, specs: SessionSpec[] = []): Promise<SessionRuntime> {
  const root = await mkdtemp(join(tmpdir(), 'ow-rename-'));
  roots.push(root);
  const adapter: Adapter<unknown> = {
    contractVersion: ADAPTER_CONTRACT_VERSION,
    name: 'stub',
    cli: FAKE_CLI,
    checkVersionFacts: checkFakeFacts,
    configSchema: z.unknown(),
    prepare: () => Promise.reject(new Error('not used')),
    open: (_config, spec) => {
      specs.push(spec);
      const session: AdapterSession = {
        prompt: () => Promise.resolve({ status: 'completed', reason: 'completed', text: 'done', usage: { reported: false } }),
        interrupt: () => Promise.resolve(),
        close: () => Promise.resolve(),
        info: {},
      };
      if (rename) session.rename = rename;
      return session;
    },
  };
  return {
    store: await createFileStore(join(root, 'state')),
    stateDir: join(root, 'state'),
    adapter,
    adapterConfig: {},
    cli: { source: 'path', binaryPath: '/bin/true', version: '1.0.0', range: '*', expected: undefined },
    secrets: [SECRET],
    decide: () => Promise.resolve({ decision: 'allow', by: 'policy' }),
    interruptGraceMs: 100,
    runTimeoutMs: 10_000,
  };
}

async function logsOf(rt: SessionRuntime, id: string): Promise<Array<Extract<RuntimeEvent, { type: 'log' }>>> {
  return (await rt.store.readEvents(id)).filter((event): event is Extract<RuntimeEvent, { type: 'log' }> => event.type === 'log');
}

describe('SessionRunner.renameNative', () => {
  it('resolves true when the adapter confirms, passing the title and a live signal', async () => {
    const calls: Array<{ title: string; aborted: boolean | undefined }> = [];
    const rt = await runtimeWith(async (title, signal) => {
      calls.push({ title, aborted: signal?.aborted });
    });
    const runner = await SessionRunner.create(rt, { workspace: '/w', autonomy: 'low', title: 'My title' });
    await runner.runTurn('hello');
    const before = await rt.store.readSession(runner.id);

    expect(await runner.renameNative('My title')).toBe(true);
    expect(calls).toEqual([{ title: 'My title', aborted: false }]);
    expect(await rt.store.readSession(runner.id)).toEqual(before);
    expect(await logsOf(rt, runner.id)).toEqual([]);
    await runner.close();
  });

  it('resolves false with an info log when the adapter has no rename', async () => {
    const rt = await runtimeWith(undefined);
    const runner = await SessionRunner.create(rt, { workspace: '/w', autonomy: 'low' });
    expect(await runner.renameNative('My title')).toBe(false);
    expect(await logsOf(rt, runner.id)).toEqual([
      expect.objectContaining({ level: 'info', message: 'native rename skipped: the stub adapter cannot rename its sessions' }),
    ]);
    await runner.close();
  });

  it('resolves false with a redacted warn log when the rename fails, leaving the turn as recorded', async () => {
    const rt = await runtimeWith(() => Promise.reject(new OneWorksError('peer_error', `droid said no to ${SECRET}`)));
    const runner = await SessionRunner.create(rt, { workspace: '/w', autonomy: 'low', title: 'Kept' });
    const outcome = await runner.runTurn('hello');
    const before = await rt.store.readSession(runner.id);

    expect(await runner.renameNative(`title with ${SECRET}`)).toBe(false);
    const after = await rt.store.readSession(runner.id);
    expect(after).toEqual(before);
    expect(after.runs.at(-1)).toMatchObject({ status: outcome.status, reason: outcome.reason, text: outcome.text });
    const logs = await logsOf(rt, runner.id);
    expect(logs).toEqual([expect.objectContaining({ level: 'warn', message: expect.stringContaining('(peer_error)') })]);
    expect(logs[0]?.message).not.toContain(SECRET);
    expect(logs[0]?.message).toContain('[REDACTED]');
    await runner.close();
  });

  it('resolves false after timeoutMs when the adapter never answers, aborting the rename signal', async () => {
    let seen: AbortSignal | undefined;
    const rt = await runtimeWith((_title, signal) => {
      seen = signal;
      return new Promise<void>(() => undefined);
    });
    const runner = await SessionRunner.create(rt, { workspace: '/w', autonomy: 'low' });
    expect(await runner.renameNative('My title', { timeoutMs: 20 })).toBe(false);
    expect(seen?.aborted).toBe(true);
    expect(await logsOf(rt, runner.id)).toEqual([
      expect.objectContaining({ level: 'warn', message: expect.stringContaining('(request_timeout)') }),
    ]);
    await runner.close();
  });

  it('resolves false without calling the adapter once the runner is closed, even when rename throws synchronously', async () => {
    let calls = 0;
    const rt = await runtimeWith(() => {
      calls += 1;
      throw new Error('sync failure');
    });
    const runner = await SessionRunner.create(rt, { workspace: '/w', autonomy: 'low' });
    expect(await runner.renameNative('first')).toBe(false);
    expect(calls).toBe(1);
    await runner.close();
    expect(await runner.renameNative('second')).toBe(false);
    expect(calls).toBe(1);
    expect((await logsOf(rt, runner.id)).map((log) => log.message)).toEqual([expect.stringContaining('(internal): sync failure')]);
  });
});

describe('SessionRunner tags', () => {
  it('keeps tags as the record labels and gives them to the adapter, for created and resumed sessions', async () => {
    const specs: SessionSpec[] = [];
    const rt = await runtimeWith(undefined, specs);
    const runner = await SessionRunner.create(rt, { workspace: '/w', autonomy: 'low', tags: ['team:core', 'demo'] });
    await runner.close();
    const resumed = await SessionRunner.resume(rt, runner.id);
    await resumed.close();
    const plain = await SessionRunner.create(rt, { workspace: '/w', autonomy: 'low', tags: [] });
    await plain.close();

    expect((await rt.store.readSession(runner.id)).labels).toEqual(['team:core', 'demo']);
    expect((await rt.store.readSession(plain.id)).labels).toBeUndefined();
    expect(specs.map((spec) => spec.tags)).toEqual([['team:core', 'demo'], ['team:core', 'demo'], undefined]);
  });
});
