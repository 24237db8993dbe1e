import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Adapter, AdapterSession, SessionIO } from '../../../core/adapter.js';
import { SessionRunner } from '../../../core/session/index.js';
import type { SessionRecord } from '../../../core/store/index.js';
import { createFakeAdapter, createFakeRuntime } from '../../support/fake-adapter.js';

// The run mode an adapter reports (SessionIO.setTurnMode, droid: `stream-jsonrpc` or `oneshot`)
// is in the run record while the turn runs. A runner's next turn starts with the mode its
// adapter session reported last, so an unchanged mode costs no record write between the run's
// start and the prompt; a changed one is written before the prompt as before.

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

describe('SessionRunner and the run mode', () => {
  it('starts a later turn with the mode reported last: written with the run, not in a second write', async () => {
    const root = await mkdtemp(join(tmpdir(), 'ow-run-mode-'));
    roots.push(root);
    const rt = await createFakeRuntime(createFakeAdapter(), join(root, 'state'));
    const written: SessionRecord[] = [];
    const store = rt.store;
    rt.store = new Proxy(store, {
      get(target, property) {
        if (property === 'writeSession') {
          return (record: SessionRecord) => {
            written.push(record);
            return target.writeSession(record);
          };
        }
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
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

    await runner.runTurn('one');
    // The first turn of a runner: the mode is learnt at the turn and written on its own.
    expect(beforePrompt.get('r1')).toEqual([
      ['running', undefined],
      ['running', 'live'],
    ]);
    await runner.runTurn('two');
    expect(beforePrompt.get('r2')).toEqual([['running', 'live']]);
    // A changed mode is recorded before the turn's prompt, as before.
    await runner.runTurn('three');
    expect(beforePrompt.get('r3')).toEqual([
      ['running', 'live'],
      ['running', 'fallback'],
    ]);
    expect((await store.readSession(runner.id)).runs.map((run) => run.mode)).toEqual(['live', 'live', 'fallback']);
    await runner.close();
  });
});
