import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrchestrator } from '../../core/orchestrator/index.js';
import type { RunRecord } from '../../core/store/index.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { byPrompt, createOrchestratorRig, type OrchestratorRig } from './orchestrator-rig.js';

// Workspace locks and crash recovery of the orchestrator over the real droid.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TOOL_LINGER_MS = 10_000;
const slowText =
  (text: string, delayMs = 1_500) =>
  () => ({ text, delayMs });

// The recorded run of each session, in the order given.
async function runsOf(o: OrchestratorRig, ids: string[]): Promise<RunRecord[]> {
  return Promise.all(ids.map(async (id) => (await o.store.readSession(id)).runs[0]!));
}

// Each run ended before the next one started (the records are written before a slot is released).
function expectSerial(runs: RunRecord[]): void {
  for (let i = 1; i < runs.length; i += 1)
    expect(runs[i - 1]!.endedAt! <= runs[i]!.startedAt!, `run ${i - 1} ended before run ${i} started`).toBe(true);
}

describe('orchestrator locks and recovery with the real droid', () => {
  it('serialises writers on a parent, its child and a symlink spelling; readers share; a writer is not starved', async () => {
    const o = await createOrchestratorRig(rigs, byPrompt({ 'write ': slowText('wrote'), 'read ': slowText('read', 4_000) }));
    const parent = await o.dir('p');
    const child = await o.dir('p/child');
    const link = join(o.rig.workspace, 'link-to-p');
    await symlink(parent, link);
    const submit = async (workspace: string, prompt: string, autonomy: 'off' | 'high') =>
      (await o.orchestrator.createSession({ adapter: 'droid', workspace, prompt, autonomy })).sessionId;

    const writers = [
      await submit(parent, 'write 1', 'high'),
      await submit(child, 'write 2', 'high'),
      await submit(link, 'write 3', 'high'),
    ];
    expect(o.orchestrator.activity()).toEqual({ live: 1, queued: 2 });
    expect((await o.orchestrator.wait(writers, 120_000)).timedOut).toBe(false);
    const written = await runsOf(o, writers);
    expect(written.map((run) => run.status)).toEqual(['completed', 'completed', 'completed']);
    expectSerial(written);

    const shared = await o.dir('shared');
    const readers = [await submit(shared, 'read 1', 'off'), await submit(shared, 'read 2', 'off')];
    expect(o.orchestrator.activity()).toEqual({ live: 2, queued: 0 });
    const writer = await submit(shared, 'write 4', 'high');
    const late = await submit(shared, 'read 3', 'off');
    expect(o.orchestrator.activity()).toEqual({ live: 2, queued: 2 });
    expect((await o.orchestrator.wait([...readers, writer, late], 120_000)).timedOut).toBe(false);
    const [r1, r2, w, r3] = await runsOf(o, [...readers, writer, late]);
    expectSerial([r1!, w!, r3!]);
    expectSerial([r2!, w!]);
    await o.orchestrator.shutdown();
    expect(await waitForNoProcesses(() => o.rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });

  it('after a crash: queued turns are queue_lost, a running one is unknown and refuses to continue, another session resumes natively', async () => {
    const o = await createOrchestratorRig(
      rigs,
      byPrompt({ first: () => ({ text: 'first done' }), again: () => ({ text: 'resumed fine' }) }),
    );
    const handles = [
      await o.orchestrator.createSession({ adapter: 'droid', workspace: await o.dir('x'), prompt: 'first x' }),
      await o.orchestrator.createSession({ adapter: 'droid', workspace: await o.dir('y'), prompt: 'first y' }),
    ];
    await o.orchestrator.wait(
      handles.map((h) => h.sessionId),
      120_000,
    );
    await o.orchestrator.shutdown();
    const [x, y] = handles.map((h) => h.sessionId) as [string, string];
    // What a dead owner leaves: x was mid-turn with one queued behind it; y had one queued.
    const recordX = await o.store.readSession(x);
    await o.store.writeSession({
      ...recordX,
      status: 'working',
      runs: [
        ...recordX.runs,
        { id: 'r2', prompt: 'was running', autonomy: 'high', status: 'running' },
        { id: 'r3', prompt: 'was queued', autonomy: 'high', status: 'queued' },
      ],
    });
    const recordY = await o.store.readSession(y);
    await o.store.writeSession({
      ...recordY,
      runs: [...recordY.runs, { id: 'r2', prompt: 'was queued', autonomy: 'high', status: 'queued' }],
    });

    const restarted = await createOrchestrator(o.deps);
    rigs.defer(() => restarted.shutdown());
    expect(await restarted.status(x)).toMatchObject({
      state: 'needs_attention',
      latestRun: { runId: 'r3', status: 'cancelled', reason: 'queue_lost' },
    });
    expect((await o.store.readSession(x)).runs[1]).toMatchObject({ status: 'unknown', reason: 'owner_died' });
    await expect(restarted.sendMessage({ sessionId: x, prompt: 'again x' })).rejects.toMatchObject({ code: 'session_unknown_outcome' });

    expect(await restarted.status(y)).toMatchObject({
      state: 'idle',
      latestRun: { runId: 'r2', status: 'cancelled', reason: 'queue_lost' },
    });
    const next = await restarted.sendMessage({ sessionId: y, prompt: 'again y' });
    expect(await restarted.waitForRun(y, next.runId)).toMatchObject({ runStatus: 'completed', text: 'resumed fine' });
    const after = await o.store.readSession(y);
    expect(after.nativeSessionId).toBe(recordY.nativeSessionId);
    expect(after.runs.map((run) => [run.id, run.status])).toEqual([
      ['r1', 'completed'],
      ['r2', 'cancelled'],
      ['r3', 'completed'],
    ]);
    await restarted.shutdown();
    expect(await waitForNoProcesses(() => o.rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  });
});
