import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Adapter, AdapterSession, SessionIO } from '../../../core/adapter.js';
import { SessionRunner, type SessionRuntime } from '../../../core/session/index.js';
import type { SessionRecord, Store } from '../../../core/store/index.js';
import { createFakeAdapter, createFakeRuntime } from '../../support/fake-adapter.js';

// The run mode an adapter reports (SessionIO.setTurnMode, droid: `stream-jsonrpc` or `oneshot`)
// is in the run record while the turn runs and in its end record. Its write never holds up the
// prompt (nothing but the views reads it); a runner's next turn starts with the mode its adapter
// session reported last, so an unchanged mode costs no record write at all.

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

// The fake adapter, whose sessions report `modes[n]` (n counts prompts) before each prompt and
// then call `atPrompt` with the run id, as the agent gets the prompt.
function reportingModes(modes: string[], atPrompt: (runId: string) => void): Adapter<unknown> {
  const { adapter } = createFakeAdapter();
  let n = 0;
  return {
    ...adapter,
    open(config: unknown, spec: Parameters<Adapter<unknown>['open']>[1], io: SessionIO): AdapterSession {
      const session = adapter.open(config, spec, io);
      return {
        get info() {
          return session.info;
        },
        prompt: async (input) => {
          await io.setTurnMode?.(modes[n++]!);
          atPrompt(input.runId);
          return session.prompt(input);
        },
        interrupt: () => session.interrupt(),
        close: () => session.close(),
      };
    },
  } as Adapter<unknown>;
}

// The runtime's store with its record writes routed through `write` (which calls `next` to write).
function interceptWrites(rt: SessionRuntime, write: (record: SessionRecord, next: () => Promise<void>) => Promise<void>): Store {
  const store = rt.store;
  rt.store = new Proxy(store, {
    get(target, property) {
      if (property === 'writeSession') return (record: SessionRecord) => write(record, () => target.writeSession(record));
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return store;
}

async function fakeRuntime(): Promise<{ root: string; rt: SessionRuntime }> {
  const root = await mkdtemp(join(tmpdir(), 'ow-run-mode-'));
  roots.push(root);
  return { root, rt: await createFakeRuntime(createFakeAdapter(), join(root, 'state')) };
}

const modeWrite = (record: SessionRecord): boolean => record.runs.at(-1)?.status === 'running' && record.runs.at(-1)?.mode !== undefined;

describe('SessionRunner and the run mode', () => {
  it('gives the agent its prompt while the mode is still being written', async () => {
    const { root, rt } = await fakeRuntime();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // Without the overlap the prompt would wait for this write: let it through after a while, so
    // that such a runner fails the expectation below instead of hanging.
    setTimeout(() => release(), 1_000).unref();
    let modeWrites = 0;
    let modeWritten = false;
    const store = interceptWrites(rt, async (record, next) => {
      if (!modeWrite(record)) return next();
      modeWrites += 1;
      await gate;
      await next();
      modeWritten = true;
    });
    const atPrompt: Array<{ started: number; written: boolean }> = [];
    rt.adapter = reportingModes(['live'], () => {
      atPrompt.push({ started: modeWrites, written: modeWritten });
      release();
    });
    const runner = await SessionRunner.create(rt, { workspace: root, autonomy: 'low' });

    const outcome = await runner.runTurn('one');

    expect(outcome.status).toBe('completed');
    // The write had begun (it was waiting) and had not ended when the agent got the prompt.
    expect(atPrompt).toEqual([{ started: 1, written: false }]);
    expect(modeWritten).toBe(true);
    expect((await store.readSession(runner.id)).runs.map((run) => [run.status, run.mode])).toEqual([['completed', 'live']]);
    await runner.close();
  });

  it('starts a later turn with the mode reported last and writes a changed one; the end records carry each', async () => {
    const { root, rt } = await fakeRuntime();
    const written: SessionRecord[] = [];
    const store = interceptWrites(rt, (record, next) => {
      written.push(record);
      return next();
    });
    // The record writes of each run up to its prompt: [status, mode] of the run in each.
    const beforePrompt = new Map<string, Array<[string, string | undefined]>>();
    rt.adapter = reportingModes(['live', 'live', 'fallback'], (runId) => {
      const runs = written.map((record) => record.runs.at(-1)).filter((run) => run?.id === runId);
      beforePrompt.set(
        runId,
        runs.map((run) => [run!.status, run!.mode]),
      );
    });
    const runner = await SessionRunner.create(rt, { workspace: root, autonomy: 'low' });
    // [status, mode] of the run in each record write while it ran.
    const whileRunning = (runId: string) =>
      written.flatMap((record) => {
        const run = record.runs.at(-1);
        return run?.id === runId && run.status === 'running' ? [[run.status, run.mode]] : [];
      });

    await runner.runTurn('one');
    // The first turn of a runner learns the mode at the turn: written after the run's start, not before the prompt.
    expect(beforePrompt.get('r1')?.[0]).toEqual(['running', undefined]);
    expect(whileRunning('r1')).toContainEqual(['running', 'live']);
    await runner.runTurn('two');
    // Started with it: the run's one write while it runs has the mode already.
    expect(beforePrompt.get('r2')).toEqual([['running', 'live']]);
    expect(whileRunning('r2')).toEqual([['running', 'live']]);
    await runner.runTurn('three');
    expect(beforePrompt.get('r3')?.[0]).toEqual(['running', 'live']);
    expect(whileRunning('r3')).toEqual([
      ['running', 'live'],
      ['running', 'fallback'],
    ]);
    expect((await store.readSession(runner.id)).runs.map((run) => [run.status, run.mode])).toEqual([
      ['completed', 'live'],
      ['completed', 'live'],
      ['completed', 'fallback'],
    ]);
    await runner.close();
  });

  it('records the mode with the turn’s end when its own write failed, and the turn is not failed by it', async () => {
    const { root, rt } = await fakeRuntime();
    const store = interceptWrites(rt, (record, next) =>
      modeWrite(record) ? Promise.reject(new Error('disk full for the mode write')) : next(),
    );
    rt.adapter = reportingModes(['live'], () => undefined);
    const runner = await SessionRunner.create(rt, { workspace: root, autonomy: 'low' });

    const outcome = await runner.runTurn('one');

    expect(outcome.status).toBe('completed');
    expect((await store.readSession(runner.id)).runs.map((run) => [run.status, run.mode])).toEqual([['completed', 'live']]);
    await runner.close();
  });
});
