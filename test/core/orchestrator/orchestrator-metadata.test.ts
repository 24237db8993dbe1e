import { describe, expect, it } from 'vitest';
import { createOrchestrator } from '../../../core/orchestrator/index.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

describe('orchestrator: session metadata, reads, usage and info', () => {
  it('persists title and labels at creation, updates them, and lists archived sessions too', async () => {
    const h = await harnesses({ fake: {} });
    const handle = await h.orchestrator.createSession({
      adapter: 'fake',
      workspace: h.root,
      prompt: 'hello',
      title: 'Fix CI',
      labels: ['team:infra', 'ci'],
    });
    await h.orchestrator.waitForRun(handle.sessionId, handle.runId);
    const stored = await h.session.store.readSession(handle.sessionId);
    expect(stored).toMatchObject({ title: 'Fix CI', labels: ['team:infra', 'ci'] });
    expect(stored).not.toHaveProperty('archived');

    const updated = await h.orchestrator.updateSession({ sessionId: handle.sessionId, labels: ['done'], archived: true });
    expect(updated).toMatchObject({
      sessionId: handle.sessionId,
      title: 'Fix CI',
      labels: ['done'],
      archived: true,
      createdAt: stored.createdAt,
    });
    expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(stored.updatedAt));
    expect(await h.session.store.readSession(handle.sessionId)).toMatchObject({ title: 'Fix CI', labels: ['done'], archived: true });

    const other = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'b' });
    await h.orchestrator.wait([other.sessionId], 60_000);
    const listed = await h.orchestrator.list();
    expect(listed.map((s) => [s.sessionId, s.archived ?? false])).toEqual(
      expect.arrayContaining([
        [handle.sessionId, true],
        [other.sessionId, false],
      ]),
    );

    // A restarted orchestrator reads the metadata back from the record.
    await h.orchestrator.shutdown();
    const again = await createOrchestrator(h.deps);
    try {
      expect(await again.status(handle.sessionId)).toMatchObject({ title: 'Fix CI', labels: ['done'], archived: true });
    } finally {
      await again.shutdown();
    }
  });

  it('refuses invalid metadata with usage and records nothing', async () => {
    const h = await harnesses({ fake: {} });
    await expect(
      h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'x', labels: ['bad label'] }),
    ).rejects.toMatchObject({ code: 'usage' });
    await expect(
      h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'x', title: 't'.repeat(201) }),
    ).rejects.toMatchObject({ code: 'usage' });
    expect(await h.session.store.listSessions()).toEqual([]);
    const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'x' });
    await expect(
      h.orchestrator.updateSession({ sessionId: handle.sessionId, labels: Array.from({ length: 33 }, (_, i) => `l${i}`) }),
    ).rejects.toMatchObject({ code: 'usage' });
    await expect(h.orchestrator.updateSession({ sessionId: 's-0000000000', title: 't' })).rejects.toMatchObject({
      code: 'session_not_found',
    });
    await h.orchestrator.wait([handle.sessionId], 60_000);
    expect(await h.session.store.readSession(handle.sessionId)).not.toHaveProperty('labels');
  });

  it('keeps an update made while a turn runs when the runner writes the record afterwards', async () => {
    const h = await harnesses({ fake: { script: () => ({ delayMs: 40 }) } });
    const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'slow', title: 'before' });
    await h.running(handle.sessionId, handle.runId);
    await h.orchestrator.updateSession({ sessionId: handle.sessionId, title: 'after', labels: ['mid-turn'] });
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
    expect(await h.session.store.readSession(handle.sessionId)).toMatchObject({
      title: 'after',
      labels: ['mid-turn'],
      runs: [{ status: 'completed' }],
    });
  });

  it('reads the latest run, a bounded tail of persisted events without deltas, and no pending question', async () => {
    const h = await harnesses({ fake: {} });
    const handle = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'hello', autonomy: 'off' });
    h.watch(handle.sessionId);
    await h.orchestrator.sendMessage({ sessionId: handle.sessionId, prompt: 'again' });
    await h.orchestrator.wait([handle.sessionId], 60_000);
    // The idle agent is closed after the run settled: read once its close is logged too.
    await h.until(async () => (await h.session.logged(handle.sessionId)).some((event) => event.type === 'session.closed'));
    const logged = await h.session.logged(handle.sessionId);

    const detail = await h.orchestrator.readSession({ sessionId: handle.sessionId, maxEvents: 4 });
    expect(detail.summary).toMatchObject({ sessionId: handle.sessionId, state: 'idle' });
    expect(detail.latestRun).toMatchObject({
      runId: 'r2',
      status: 'completed',
      prompt: 'again',
      settings: { autonomy: 'off' },
      text: 'reply to again',
    });
    expect(detail.events).toEqual(logged.slice(-4));
    expect(detail.eventsTruncated).toBe(true);
    expect(detail.pendingQuestions).toEqual([]);

    const all = await h.orchestrator.readSession({ sessionId: handle.sessionId, maxEvents: 200 });
    expect(all.events).toEqual(logged.filter((e) => !e.type.endsWith('.delta')));
    expect(all.eventsTruncated).toBe(false);
    // Deltas are streamed live but never part of a read.
    expect(h.events.some((e) => e.type === 'assistant.delta')).toBe(true);

    const small = await h.orchestrator.readSession({ sessionId: handle.sessionId, maxBytes: 600 });
    expect(Buffer.byteLength(small.events.map((e) => JSON.stringify(e)).join(''))).toBeLessThanOrEqual(600);
    expect(small.eventsTruncated).toBe(true);
    await expect(h.orchestrator.readSession({ sessionId: handle.sessionId, maxEvents: 500 })).rejects.toMatchObject({ code: 'usage' });
  });

  it('sums the usage the runs reported, per session and in total', async () => {
    const h = await harnesses({ fake: {} });
    const a = await h.orchestrator.createSession({ adapter: 'fake', workspace: await h.dir('a'), prompt: 'one' });
    await h.orchestrator.sendMessage({ sessionId: a.sessionId, prompt: 'two' });
    const b = await h.orchestrator.createSession({ adapter: 'fake', workspace: await h.dir('b'), prompt: 'three' });
    await h.orchestrator.wait([a.sessionId, b.sessionId], 60_000);
    const perRun = (await h.session.store.readSession(b.sessionId)).runs[0]!.usage!;
    expect(perRun.reported).toBe(true);
    expect(perRun.inputTokens).toBeGreaterThan(0);
    // Every fake turn reports the same usage: n runs sum to n times it, field by field.
    const times = (n: number): Record<string, unknown> =>
      Object.fromEntries(Object.entries(perRun).map(([field, value]) => [field, typeof value === 'number' ? n * value : value]));

    const only = await h.orchestrator.usage([a.sessionId]);
    expect(only.sessions).toEqual([{ sessionId: a.sessionId, runs: 2, usage: times(2) }]);
    expect(only.total).toEqual(times(2));
    const all = await h.orchestrator.usage();
    expect(all.sessions.map((s) => s.sessionId).sort()).toEqual([a.sessionId, b.sessionId].sort());
    expect(all.total).toEqual(times(3));
  });

  it('describes roots, limits, activity and adapter defaults; models come from the deps catalog', async () => {
    const catalog = [
      { id: 'm1', displayName: 'M1', custom: false, deprecated: false, disabled: false, efforts: ['low'], defaultEffort: 'low' },
    ];
    const h = await harnesses({
      fake: {},
      deps: {
        adapterNames: () => ['fake'],
        defaultsFor: () => ({ model: 'm1', autonomy: 'medium' }),
        modelsFor: async (adapter) => (adapter === 'fake' ? catalog : undefined),
      },
    });
    expect(await h.orchestrator.info()).toEqual({
      approvedRoots: [h.root],
      limits: { maxConcurrentRuns: 4, maxQueuedTotal: 16, maxQueuedPerSession: 8, runTimeoutMs: 15_000, cancelGraceMs: 300 },
      activity: { live: 0, queued: 0 },
      adapters: [{ name: 'fake', model: 'm1', autonomy: 'medium' }],
    });
    expect(await h.orchestrator.models('fake')).toEqual(catalog);
    await expect(h.orchestrator.models('other')).rejects.toMatchObject({ code: 'usage' });
  });
});
