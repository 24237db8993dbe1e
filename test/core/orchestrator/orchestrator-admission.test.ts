import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Autonomy } from '../../../core/adapter.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import type { OrchestratorHarness } from './orchestrator-harness.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

// Which sessions started, and the most turns ever live at once according to the event stream.
function startsAndOverlap(events: readonly RuntimeEvent[]): { started: string[]; maxLive: number } {
  const started: string[] = [];
  let live = 0;
  let maxLive = 0;
  for (const event of events) {
    if (event.type === 'turn.started') {
      started.push(event.sessionId);
      maxLive = Math.max(maxLive, ++live);
    }
    if (event.type === 'turn.completed') live--;
  }
  return { started, maxLive };
}

async function submit(h: OrchestratorHarness, workspace: string, autonomy: Autonomy): Promise<string> {
  const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace, prompt: 'work', autonomy });
  h.watch(handle.sessionId);
  return handle.sessionId;
}

describe('orchestrator: admission across sessions', () => {
  it('runs sessions on different workspaces concurrently up to maxConcurrentRuns and queues the rest in order', async () => {
    // Turns never end by themselves: each cancel frees one slot, and the oldest queued session takes it.
    const h = await harnesses({ fake: { script: () => ({ delayMs: 60_000 }) }, limits: { maxConcurrentRuns: 2 } });
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e']) ids.push(await submit(h, await h.dir(name), 'high'));
    const [a, b, c, d, e] = ids as [string, string, string, string, string];
    expect(h.orchestrator.activity()).toEqual({ live: 2, queued: 3 });
    const samples: number[] = [];
    for (const id of ids) h.orchestrator.subscribe(id, () => samples.push(h.orchestrator.activity().live));
    const runStatus = async (id: string) => (await h.session.store.readSession(id)).runs[0]!.status;
    await h.running(a, 'r1');
    await h.running(b, 'r1');
    expect(await Promise.all([c, d, e].map(runStatus))).toEqual(['queued', 'queued', 'queued']);

    await h.orchestrator.cancel(a);
    await h.running(c, 'r1');
    expect(h.orchestrator.activity()).toEqual({ live: 2, queued: 2 });
    expect(await Promise.all([d, e].map(runStatus))).toEqual(['queued', 'queued']);
    await h.orchestrator.cancel(c);
    await h.running(d, 'r1');
    expect(await runStatus(e)).toBe('queued');
    await h.orchestrator.cancel(b);
    await h.running(e, 'r1');
    expect(h.orchestrator.activity()).toEqual({ live: 2, queued: 0 });
    expect(Math.max(...samples)).toBeLessThanOrEqual(2);
    expect(startsAndOverlap(h.events).maxLive).toBeLessThanOrEqual(2);
  });

  it('serialises writers on overlapping trees: parent, child, and a symlink spelling of the parent', async () => {
    const h = await harnesses({ fake: { script: () => ({ delayMs: 30 }) } });
    const parent = await h.dir('p');
    const child = await h.dir('p/child');
    const link = join(h.root, 'link-to-p');
    await symlink(parent, link);
    const ids = [await submit(h, parent, 'medium'), await submit(h, child, 'low'), await submit(h, link, 'high')];
    expect(h.orchestrator.activity()).toEqual({ live: 1, queued: 2 });
    expect((await h.orchestrator.status(ids[2]!)).workspace).toBe((await h.orchestrator.status(ids[0]!)).workspace);
    expect((await h.orchestrator.wait(ids, 120_000)).timedOut).toBe(false);
    expect(startsAndOverlap(h.events)).toEqual({ started: ids, maxLive: 1 });
  });

  it('lets readers (autonomy off) of one tree run together', async () => {
    const h = await harnesses({ fake: { script: () => ({ delayMs: 30 }) } });
    const tree = await h.dir('shared');
    const ids = [await submit(h, tree, 'off'), await submit(h, tree, 'off'), await submit(h, join(tree, '..', 'shared'), 'off')];
    expect(h.orchestrator.activity()).toEqual({ live: 3, queued: 0 });
    expect((await h.orchestrator.wait(ids, 120_000)).timedOut).toBe(false);
    expect(startsAndOverlap(h.events).started.sort()).toEqual([...ids].sort());
  });

  it('does not let later readers pass a writer that waits behind a reader', async () => {
    const h = await harnesses({ fake: { script: () => ({ delayMs: 30 }) } });
    const tree = await h.dir('t');
    const reader = await submit(h, tree, 'off');
    const writer = await submit(h, tree, 'low');
    const later = await submit(h, tree, 'off');
    expect(h.orchestrator.activity()).toEqual({ live: 1, queued: 2 });
    expect((await h.orchestrator.status(later)).state).toBe('working');
    expect((await h.orchestrator.wait([reader, writer, later], 120_000)).timedOut).toBe(false);
    expect(startsAndOverlap(h.events)).toEqual({ started: [reader, writer, later], maxLive: 1 });
  });

  it('refuses a turn beyond the queue bounds with queue_full and records nothing for it', async () => {
    const h = await harnesses({
      fake: { script: () => ({ delayMs: 5_000 }) },
      limits: { maxConcurrentRuns: 1, maxQueuedTotal: 2, maxQueuedPerSession: 1 },
    });
    const live = await submit(h, await h.dir('a'), 'low');
    const queued = await h.orchestrator.sendMessage({ sessionId: live, prompt: 'second' });
    expect(queued.state).toBe('queued');
    await expect(h.orchestrator.sendMessage({ sessionId: live, prompt: 'third' })).rejects.toMatchObject({
      code: 'queue_full',
      data: { bound: 'maxQueuedPerSession' },
    });
    await submit(h, await h.dir('b'), 'low');
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: await h.dir('c'), prompt: 'x' })).rejects.toMatchObject({
      code: 'queue_full',
      data: { bound: 'maxQueuedTotal' },
    });
    const records = await h.session.store.listSessions();
    expect(records).toHaveLength(2);
    expect(records.find((r) => r.id === live)!.runs.map((r) => r.prompt)).toEqual(['work', 'second']);
    expect(h.orchestrator.activity()).toEqual({ live: 1, queued: 2 });
  });
});
