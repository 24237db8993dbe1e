import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { recoverInterruptedRuns, recoverSessions } from '../../../core/session/recover.js';
import { createFileStore } from '../../../core/store/index.js';
import type { RunRecord, SessionRecord } from '../../../core/store/index.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

function record(id: string, runs: RunRecord[], status: SessionRecord['status']): SessionRecord {
  const at = '2026-11-30T00:00:00.000Z';
  return { id, adapter: 'droid', workspace: '/w', createdAt: at, updatedAt: at, status, runs };
}
const run = (id: string, status: RunRecord['status']): RunRecord => ({ id, prompt: 'p', autonomy: 'low', status });

describe('recoverInterruptedRuns', () => {
  it('marks running runs unknown (needs attention) and queued runs cancelled/queue_lost, leaving settled sessions alone', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-recover-'));
    dirs.push(dir);
    const store = await createFileStore(dir);
    await store.writeSession(record('s-live', [run('r1', 'completed'), run('r2', 'running'), run('r3', 'queued')], 'working'));
    await store.writeSession(record('s-queued', [run('r1', 'completed'), run('r2', 'queued')], 'working'));
    await store.writeSession(record('s-done', [run('r1', 'completed')], 'idle'));

    const changed = await recoverInterruptedRuns(store);

    expect(changed.sort()).toEqual(['s-live', 's-queued']);
    const live = await store.readSession('s-live');
    expect(live.status).toBe('needs_attention');
    expect(live.runs.map((r) => [r.status, r.reason])).toEqual([
      ['completed', undefined],
      ['unknown', 'owner_died'],
      ['cancelled', 'queue_lost'],
    ]);
    expect(live.attention?.join(' ')).toMatch(/r2: outcome unknown/);
    const queued = await store.readSession('s-queued');
    expect(queued.status).toBe('idle');
    expect(queued.runs[1]).toMatchObject({ status: 'cancelled', reason: 'queue_lost' });
    expect((await store.readSession('s-done')).status).toBe('idle');
  });
});

describe('recoverInterruptedRuns: known outcomes and bad records', () => {
  it('takes the outcome of a running run from the event log (a record write lost), and skips a malformed record', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-recover-'));
    dirs.push(dir);
    const store = await createFileStore(dir);
    await store.writeSession(record('s-logged', [run('r1', 'completed'), run('r2', 'running')], 'working'));
    const outcome = { status: 'failed' as const, reason: 'completion_persistence_failed', text: 'partial', usage: { reported: false } };
    await store.appendEvents('s-logged', [
      {
        type: 'turn.completed',
        key: 'turn:r2:completed',
        runId: 'r2',
        outcome,
        sessionId: 's-logged',
        seq: 1,
        at: '2026-11-30T00:00:01.000Z',
      },
    ]);
    await mkdir(join(dir, 'sessions', 's-broken'), { recursive: true });
    await writeFile(join(dir, 'sessions', 's-broken', 'session.json'), '{"id": "s-broken", "runs": [');

    expect(await recoverInterruptedRuns(store)).toEqual(['s-logged']);

    const logged = await store.readSession('s-logged');
    expect(logged.runs[1]).toMatchObject({ status: 'failed', reason: 'completion_persistence_failed', text: 'partial' });
    expect(logged.status).toBe('needs_attention');
    expect(logged.attention).toEqual(['run r2 failed: completion_persistence_failed']);
    expect(await readFile(join(dir, 'sessions', 's-broken', 'session.json'), 'utf8')).toBe('{"id": "s-broken", "runs": [');
  });

  it('returns the malformed records it skipped, from a full scan and from a fleet worker’s own sessions', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ow-recover-'));
    dirs.push(dir);
    const store = await createFileStore(dir);
    await store.writeSession(record('s-open', [run('r1', 'running')], 'working'));
    await store.writeSession(record('s-other', [run('r1', 'queued')], 'working'));
    await mkdir(join(dir, 'sessions', 's-broken'), { recursive: true });
    const brokenFile = join(dir, 'sessions', 's-broken', 'session.json');
    await writeFile(brokenFile, '{"id": "s-broken", "runs": [');
    const broken = { sessionId: 's-broken', file: brokenFile, reason: expect.stringMatching(/^not valid JSON: .*truncated/) };

    // A fleet worker reads its own sessions alone: the other session's queued run stays.
    expect(await recoverSessions(store, { only: ['s-open', 's-broken', 's-missing'] })).toEqual({ changed: ['s-open'], corrupt: [broken] });
    expect((await store.readSession('s-other')).runs[0]?.status).toBe('queued');
    expect(await recoverSessions(store)).toEqual({ changed: ['s-other'], corrupt: [broken] });
    expect(await readFile(brokenFile, 'utf8')).toBe('{"id": "s-broken", "runs": [');
  });
});
