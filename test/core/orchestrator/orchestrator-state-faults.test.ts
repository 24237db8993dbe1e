import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createOrchestrator } from '../../../core/orchestrator/index.js';
import type { RunRecord, SessionRecord } from '../../../core/store/index.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

function record(id: string, workspace: string, runs: RunRecord[], status: SessionRecord['status'] = 'working'): SessionRecord {
  const at = '2026-01-01T00:00:00.000Z';
  return { id, adapter: 'fake', workspace, createdAt: at, updatedAt: at, status, runs };
}

describe('orchestrator: state that never takes it down', () => {
  it('starts beside a corrupt and a truncated record, reports them, and runs and reconciles the healthy session', async () => {
    const h = await harnesses({ fake: {} });
    await h.orchestrator.shutdown();
    const store = h.session.store;
    await store.writeSession(record('s-aaaaaaaaaa', h.root, [{ id: 'r1', prompt: 'a', autonomy: 'low', status: 'running' }]));
    const sessions = join(h.deps.stateDir, 'sessions');
    await mkdir(join(sessions, 's-corrupt00'), { recursive: true });
    const typo = JSON.stringify({ ...record('s-corrupt00', h.root, []), status: 'idel' });
    await writeFile(join(sessions, 's-corrupt00', 'session.json'), typo);
    await mkdir(join(sessions, 's-truncated'), { recursive: true });
    await writeFile(join(sessions, 's-truncated', 'session.json'), '{"id":"s-truncated","adapter":"dr');

    const o = await createOrchestrator(h.deps);
    try {
      expect((await o.list()).map((s) => s.sessionId)).toEqual(['s-aaaaaaaaaa']);
      expect(await o.corruptSessions()).toEqual([
        { sessionId: 's-corrupt00', file: join(sessions, 's-corrupt00', 'session.json'), reason: expect.stringMatching(/^status: /) },
        { sessionId: 's-truncated', file: join(sessions, 's-truncated', 'session.json'), reason: expect.stringMatching(/truncated/) },
      ]);
      await expect(o.status('s-truncated')).rejects.toMatchObject({ code: 'state_corrupt' });
      expect(await o.usage()).toMatchObject({ sessions: [{ sessionId: 's-aaaaaaaaaa' }] });

      // Recovery went on past the bad records: the healthy session's run is unknown, and refused until reconciled.
      expect(await o.status('s-aaaaaaaaaa')).toMatchObject({ state: 'needs_attention', latestRun: { runId: 'r1', status: 'unknown' } });
      await expect(o.sendMessage({ sessionId: 's-aaaaaaaaaa', prompt: 'go on' })).rejects.toMatchObject({
        code: 'session_unknown_outcome',
      });
      await expect(o.reconcileRun({ sessionId: 's-aaaaaaaaaa', runId: 'r9', status: 'failed' })).rejects.toMatchObject({ code: 'usage' });
      const summary = await o.reconcileRun({ sessionId: 's-aaaaaaaaaa', runId: 'r1', status: 'failed', note: 'the tests never ran' });
      expect(summary).toMatchObject({ state: 'idle', latestRun: { runId: 'r1', status: 'failed', reason: 'reconciled' } });
      expect(summary.attention).toBeUndefined();
      await expect(o.reconcileRun({ sessionId: 's-aaaaaaaaaa', runId: 'r1', status: 'completed' })).rejects.toMatchObject({
        code: 'usage',
        message: expect.stringMatching(/only an unknown outcome is reconciled/),
      });
      const next = await o.sendMessage({ sessionId: 's-aaaaaaaaaa', prompt: 'go on' });
      expect(await o.waitForRun('s-aaaaaaaaaa', next.runId)).toMatchObject({ status: 'completed' });
      const reconciled = (await store.readEvents('s-aaaaaaaaaa')).filter((e) => e.type === 'run.reconciled');
      expect(reconciled).toMatchObject([
        { runId: 'r1', status: 'failed', previous: { status: 'unknown', reason: 'owner_died' }, note: 'the tests never ran' },
      ]);
    } finally {
      await o.shutdown();
    }
    // Nobody rewrote the bad records.
    expect(await readFile(join(sessions, 's-corrupt00', 'session.json'), 'utf8')).toBe(typo);
  });

  it('a known outcome whose record write failed (disk full) is written by a graceful stop, never downgraded on the next start', async () => {
    const h = await harnesses({ fake: {} });
    const store = h.session.store;
    const writeSession = store.writeSession.bind(store);
    let full = false;
    store.writeSession = async (written: SessionRecord) => {
      // The disk fills up as the turn's outcome is written; every write fails until space is freed.
      if (written.runs.some((run) => run.status === 'completed')) full ||= true;
      if (full) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      return writeSession(written);
    };
    const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello' });
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(await h.orchestrator.status(handle.sessionId)).toMatchObject({ state: 'idle', latestRun: { status: 'completed' } });
    expect((await store.readSession(handle.sessionId)).runs[0]?.status).toBe('running');

    full = false;
    store.writeSession = writeSession;
    await h.orchestrator.shutdown();
    expect((await store.readSession(handle.sessionId)).runs[0]).toMatchObject({ status: 'completed' });
    const again = await createOrchestrator(h.deps);
    try {
      expect(await again.status(handle.sessionId)).toMatchObject({ state: 'idle', latestRun: { status: 'completed' } });
    } finally {
      await again.shutdown();
    }
  });
});
