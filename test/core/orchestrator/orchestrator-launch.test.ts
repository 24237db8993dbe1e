import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../core/catalog/index.js';
import { OneWorksError } from '../../../core/errors.js';
import { REQUEST_KEYS_FILE, createOrchestrator, type OrchestratorDeps } from '../../../core/orchestrator/index.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

const harnesses = useOrchestratorHarnesses();

const entry = (id: string, efforts: string[], defaultEffort?: string): CatalogModel => ({
  id,
  displayName: id,
  custom: false,
  deprecated: false,
  disabled: false,
  efforts,
  ...(defaultEffort ? { defaultEffort } : {}),
});
const CATALOG = [
  entry('big', ['low', 'medium', 'high'], 'medium'),
  entry('small', ['low', 'high'], 'low'),
  entry('custom:byok', ['none']),
  entry('picky', ['low', 'high']),
];

// A harness whose adapter defaults to model `big` at effort `high`, autonomy low, with a
// counting fake catalog.
async function launchHarness() {
  const calls: string[] = [];
  const deps: Partial<OrchestratorDeps> = {
    defaultsFor: () => ({ model: 'big', effort: 'high', autonomy: 'low' }),
    modelsFor: async (adapter) => {
      calls.push(adapter);
      return CATALOG;
    },
  };
  return { h: await harnesses({ fake: {}, deps }), calls };
}

describe('orchestrator: launch defaults', () => {
  it('bounds the catalog listing at acceptance: catalog_unavailable, nothing accepted, and a retry once it answers', async () => {
    let answer: (() => void) | undefined;
    const h = await harnesses({
      fake: {},
      deps: {
        defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
        modelsFor: () => new Promise((resolve) => (answer = () => resolve(CATALOG))),
        catalogDeadlineMs: 100,
      },
    });
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' })).rejects.toMatchObject({
      code: 'catalog_unavailable',
    });
    expect(await h.orchestrator.list()).toEqual([]);
    expect(h.orchestrator.activity()).toEqual({ live: 0, queued: 0 });
    answer = undefined;
    const retried = h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    await h.until(() => answer !== undefined);
    answer!();
    const handle = await retried;
    expect(await h.orchestrator.waitForRun(handle.sessionId, handle.runId)).toMatchObject({ status: 'completed' });
  });

  it('follows turn.queued with a warn note when an asked effort does not apply to the model', async () => {
    const { h } = await launchHarness();
    const created = await h.orchestrator.createSession({
      adapter: 'fake',
      workspace: h.root,
      prompt: 'one',
      model: 'custom:byok',
      effort: 'high',
    });
    expect(created.settings).toEqual({ model: 'custom:byok', autonomy: 'low' });
    await h.orchestrator.waitForRun(created.sessionId, created.runId);
    const logged = await h.session.logged(created.sessionId);
    const queued = logged.findIndex((event) => event.type === 'turn.queued');
    expect(logged[queued + 1]).toMatchObject({
      type: 'log',
      level: 'warn',
      message: 'note: model custom:byok has no reasoning effort levels; effort "high" does not apply and is ignored',
    });
  });

  // A harness whose default model has no effort levels, configured with `effort: high` (explicit or a schema default).
  const configuredEffortNotes = async (effortExplicit: boolean): Promise<unknown[]> => {
    const h = await harnesses({
      fake: {},
      deps: {
        defaultsFor: () => ({ model: 'custom:byok', effort: 'high', autonomy: 'low', effortExplicit }),
        modelsFor: async () => CATALOG,
      },
    });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    expect(created.settings).toEqual({ model: 'custom:byok', autonomy: 'low' });
    await h.orchestrator.waitForRun(created.sessionId, created.runId);
    return (await h.session.logged(created.sessionId)).filter((event) => event.type === 'log' && event.level === 'warn');
  };

  it('notes a configured effort dropped for a default model without effort levels, like an asked one', async () => {
    expect(await configuredEffortNotes(true)).toMatchObject([
      { message: 'note: model custom:byok has no reasoning effort levels; effort "high" does not apply and is ignored' },
    ]);
  });

  it('says nothing when the dropped effort is only the schema default', async () => {
    expect(await configuredEffortNotes(false)).toEqual([]);
  });

  it('an advisory catalog passes an unlisted model through with a warn note, never model_unavailable; a listed one without a note', async () => {
    const h = await harnesses({
      fake: {},
      deps: { defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: async () => CATALOG, catalogIsAdvisory: () => true },
    });
    const created = await h.orchestrator.createSession({
      adapter: 'fake',
      workspace: h.root,
      prompt: 'one',
      model: 'unlisted-9',
      effort: 'max',
    });
    expect(created.settings).toEqual({ model: 'unlisted-9', effort: 'max', autonomy: 'low' });
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed' });
    const second = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two', model: 'big' });
    await h.orchestrator.wait([created.sessionId], 60_000);
    expect(await h.orchestrator.waitForRun(created.sessionId, second.runId)).toMatchObject({ status: 'completed' });
    const notes = (await h.session.logged(created.sessionId)).filter((event) => event.type === 'log' && event.level === 'warn');
    expect(notes.map((event) => (event as { message: string }).message)).toEqual([
      "note: model unlisted-9 is not in fake's model list, which is advisory (the configured model and the CLI's aliases): it is passed to fake as is",
    ]);
  });

  it('a degraded catalog (the CLI cannot start) still refuses an unlisted model, accepts a listed one with its note as a warn, after the settings notes', async () => {
    const h = await harnesses({
      fake: {},
      deps: {
        defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
        modelsFor: async (_adapter, options) => {
          options?.degraded?.('droid cannot start to list its models; the model was checked against the last known catalog');
          return CATALOG;
        },
      },
    });
    await expect(
      h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', model: 'unlisted-9' }),
    ).rejects.toMatchObject({ code: 'model_unavailable' });
    const created = await h.orchestrator.createSession({
      adapter: 'fake',
      workspace: h.root,
      prompt: 'one',
      model: 'custom:byok',
      effort: 'high',
    });
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed' });
    const notes = (await h.session.logged(created.sessionId)).flatMap((event) =>
      event.type === 'log' && event.level === 'warn' ? [event.message] : [],
    );
    expect(notes).toEqual([
      expect.stringMatching(/^note: .*custom:byok/),
      'note: droid cannot start to list its models; the model was checked against the last known catalog',
    ]);
  });

  it('no catalog at all (the CLI cannot start, none listed before) lets the turn through unchecked with the note', async () => {
    const h = await harnesses({
      fake: {},
      deps: {
        defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
        modelsFor: async (_adapter, options) => {
          if (!options?.degraded) throw new OneWorksError('probe_failed', 'droid exited');
          options.degraded('droid cannot start to list its models; the model could not be checked');
          return undefined;
        },
      },
    });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', model: 'unlisted-9' });
    expect(created.settings).toEqual({ model: 'unlisted-9', autonomy: 'low' });
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed' });
    const notes = (await h.session.logged(created.sessionId)).flatMap((event) =>
      event.type === 'log' && event.level === 'warn' ? [event.message] : [],
    );
    expect(notes).toEqual(['note: droid cannot start to list its models; the model could not be checked']);
    // `models()` (one-works models, MCP list_models) never takes the degraded path.
    await expect(h.orchestrator.models('fake')).rejects.toMatchObject({ code: 'probe_failed' });
  });

  it('the same catalog, authoritative, refuses the unlisted model', async () => {
    const { h } = await launchHarness();
    await expect(
      h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', model: 'unlisted-9' }),
    ).rejects.toMatchObject({
      code: 'model_unavailable',
    });
  });

  it('records the settings each turn resolved at acceptance and returns them in the handle', async () => {
    const { h } = await launchHarness();
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', autonomy: 'off' });
    expect(created.settings).toEqual({ model: 'big', effort: 'high', autonomy: 'off' });
    // Follow-ups inherit from the last accepted turn (here still queued or running), never the host default autonomy.
    const second = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two' });
    expect(second.settings).toEqual({ model: 'big', effort: 'high', autonomy: 'off' });
    // A new model without an effort: that model's catalog default, not the old effort.
    const third = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'three', model: 'small' });
    expect(third.settings).toEqual({ model: 'small', effort: 'low', autonomy: 'off' });
    // A model without effort levels gets none, and the next turn inherits that.
    const fourth = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'four', model: 'custom:byok' });
    expect(fourth.settings).toEqual({ model: 'custom:byok', autonomy: 'off' });
    const fifth = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'five', autonomy: 'medium' });
    expect(fifth.settings).toEqual({ model: 'custom:byok', autonomy: 'medium' });

    await h.orchestrator.wait([created.sessionId], 60_000);
    const runs = (await h.session.store.readSession(created.sessionId)).runs;
    expect(runs.map((run) => [run.id, run.status, run.model, run.effort, run.autonomy])).toEqual([
      ['r1', 'completed', 'big', 'high', 'off'],
      ['r2', 'completed', 'big', 'high', 'off'],
      ['r3', 'completed', 'small', 'low', 'off'],
      // The runner kept open for r3 would have filled the missing effort with r3's: r4 got a fresh one.
      ['r4', 'completed', 'custom:byok', undefined, 'off'],
      ['r5', 'completed', 'custom:byok', undefined, 'medium'],
    ]);
    const detail = await h.orchestrator.readSession({ sessionId: created.sessionId });
    expect(detail.latestRun?.settings).toEqual({ model: 'custom:byok', autonomy: 'medium' });
  });

  it('refuses what the catalog does not support, recording nothing', async () => {
    const { h } = await launchHarness();
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    await h.orchestrator.waitForRun(created.sessionId, created.runId);
    await expect(h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'x', model: 'picky' })).rejects.toMatchObject({
      code: 'effort_required',
      message: expect.stringContaining('low, high'),
    });
    await expect(h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'x', model: 'nope' })).rejects.toMatchObject({
      code: 'model_unavailable',
    });
    await expect(h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'x', effort: 'off' })).rejects.toMatchObject({
      code: 'effort_unsupported',
    });
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'x', model: 'nope' })).rejects.toMatchObject({
      code: 'model_unavailable',
    });
    expect((await h.session.store.readSession(created.sessionId)).runs).toHaveLength(1);
    expect(await h.session.store.listSessions()).toHaveLength(1);
    const ok = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'y', model: 'picky', effort: 'high' });
    expect(ok.settings).toEqual({ model: 'picky', effort: 'high', autonomy: 'low' });
    await h.orchestrator.wait([created.sessionId], 60_000);
  });

  it('refuses a turn whose catalog cannot be listed, with the listing error, recording nothing', async () => {
    const h = await harnesses({
      fake: {},
      deps: {
        defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
        modelsFor: () => Promise.reject(new OneWorksError('probe_failed', 'listing the catalog of fake failed: boom')),
      },
    });
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'x', requestKey: 'k' })).rejects.toMatchObject({
      code: 'probe_failed',
    });
    expect(await h.session.store.listSessions()).toEqual([]);
    // The key stayed unclaimed: the same request may be retried.
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'x', requestKey: 'k' })).rejects.toMatchObject({
      code: 'probe_failed',
    });
    // Without a model to check, no listing is needed.
    const inherit = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'y', model: 'inherit' });
    await h.orchestrator.waitForRun(inherit.sessionId, inherit.runId);
  });

  it('asks the catalog only for a model it will check', async () => {
    const { h, calls } = await launchHarness();
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', model: 'inherit' });
    expect(created.settings).toEqual({ model: 'inherit', autonomy: 'low' });
    await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two' });
    expect(calls).toEqual([]);
    await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'three', model: 'big' });
    expect(calls).toEqual(['fake']);
    await h.orchestrator.wait([created.sessionId], 60_000);
  });

  it('replays the original settings for a request key, after later turns and after a restart', async () => {
    const { h } = await launchHarness();
    const request = { adapter: 'fake', workspace: h.root, prompt: 'one', requestKey: 'create-1', autonomy: 'off' as const };
    const created = await h.orchestrator.createSession(request);
    const send = { sessionId: created.sessionId, prompt: 'two', model: 'small', requestKey: 'send-1' };
    const sent = await h.orchestrator.sendMessage(send);
    await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'three', model: 'big', effort: 'medium', autonomy: 'high' });
    await h.orchestrator.wait([created.sessionId], 60_000);
    expect(await h.orchestrator.createSession(request)).toEqual(created);
    expect(await h.orchestrator.sendMessage(send)).toEqual({ ...sent, settings: { model: 'small', effort: 'low', autonomy: 'off' } });

    // A handle saved before handles carried settings replays them from its run.
    await h.orchestrator.shutdown();
    const file = join(h.deps.stateDir, REQUEST_KEYS_FILE);
    const saved = JSON.parse(await readFile(file, 'utf8')) as Record<string, { handle: Record<string, unknown> }>;
    delete saved['send-1']!.handle.settings;
    await writeFile(file, JSON.stringify(saved));
    const again = await createOrchestrator(h.deps);
    try {
      expect(await again.sendMessage(send)).toEqual(sent);
    } finally {
      await again.shutdown();
    }
  });
});
