import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../core/catalog/index.js';
import type { ModelsForOptions } from '../../../core/orchestrator/index.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

// Acceptance with a catalog past its freshness (ModelsForOptions.stale): settings the stale models
// allow are accepted at once and the catalog is listed again once the turn has ended, never while
// it starts; a model (or effort) the stale models do not allow waits for the fresh listing, which
// alone refuses it or lets it through.

const harnesses = useOrchestratorHarnesses();

const entry = (id: string): CatalogModel => ({
  id,
  displayName: id,
  custom: false,
  deprecated: false,
  disabled: false,
  efforts: ['low', 'high'],
  defaultEffort: 'low',
});

// A host whose catalog on disk is stale (`stale` models) and whose listing gives `fresh` models:
// it answers with the stale ones and hands the listing over, as cli/daemon/deps.ts does.
function staleCatalog(stale: string[], fresh: string[], options: { failListing?: boolean; gate?: Promise<void> } = {}) {
  const listings: string[] = [];
  let current = stale;
  const modelsFor = async (adapter: string, forTurn?: ModelsForOptions): Promise<CatalogModel[]> => {
    const listing = async (): Promise<CatalogModel[]> => {
      listings.push(adapter);
      await options.gate;
      if (options.failListing) throw new Error('the CLI could not list its models');
      current = fresh;
      return fresh.map(entry);
    };
    if (current === stale && forTurn?.stale) {
      forTurn.stale(listing);
      return stale.map(entry);
    }
    return current === stale ? listing() : fresh.map(entry);
  };
  return { modelsFor, listings };
}

describe('orchestrator: a stale catalog at acceptance', () => {
  it('accepts a model the stale catalog lists at once, and lists the catalog again only after the turn ended', async () => {
    const catalog = staleCatalog(['big'], ['big', 'new']);
    const h = await harnesses({
      fake: { script: (_input, n) => (n === 0 ? { hang: true } : {}) },
      deps: { defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: catalog.modelsFor },
    });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    expect(created.settings).toEqual({ model: 'big', autonomy: 'low' });
    await h.running(created.sessionId, created.runId);
    // The turn's agent has its prompt (it hangs until cancelled): no listing has run.
    await h.until(() => (h.fake?.log.prompts.length ?? 0) === 1);
    expect(catalog.listings).toEqual([]);
    await h.orchestrator.cancel(created.sessionId, created.runId);
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'interrupted' });
    await h.until(() => catalog.listings.length === 1);
    // Listed now: a follow-up with a model only the fresh list has is accepted without waiting.
    const next = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two', model: 'new' });
    expect(next.settings).toMatchObject({ model: 'new' });
    expect(await h.orchestrator.waitForRun(created.sessionId, next.runId)).toMatchObject({ status: 'completed' });
    expect(catalog.listings).toEqual(['fake']);
  });

  it('still refuses a model neither the stale catalog nor the fresh listing has: the listing runs first, nothing is recorded', async () => {
    const catalog = staleCatalog(['big'], ['big', 'new']);
    const h = await harnesses({
      fake: {},
      deps: { defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: catalog.modelsFor },
    });
    await expect(
      h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', model: 'unlisted-9' }),
    ).rejects.toMatchObject({ code: 'model_unavailable' });
    expect(catalog.listings).toEqual(['fake']);
    expect(await h.orchestrator.list()).toEqual([]);
    expect(h.fake?.log.prompts).toEqual([]);
  });

  it('accepts a model only the fresh listing has, waiting for it; and an effort the stale entry refuses is checked the same way', async () => {
    const catalog = staleCatalog(['big'], ['big', 'new']);
    const h = await harnesses({
      fake: {},
      deps: { defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: catalog.modelsFor },
    });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', model: 'new' });
    expect(catalog.listings).toEqual(['fake']);
    expect(created.settings).toEqual({ model: 'new', effort: 'low', autonomy: 'low' });
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed' });
    // Fresh from now on: an effort the model does not list is refused by it, with no listing more.
    await expect(h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two', effort: 'max' })).rejects.toMatchObject({
      code: 'effort_unsupported',
    });
    expect(catalog.listings).toEqual(['fake']);
  });

  it('a listing that fails after the turn is logged and changes nothing for the turn', async () => {
    const catalog = staleCatalog(['big'], ['big'], { failListing: true });
    const logged: string[] = [];
    const h = await harnesses({
      fake: {},
      deps: {
        defaultsFor: () => ({ model: 'big', autonomy: 'low' }),
        modelsFor: catalog.modelsFor,
        log: (message) => logged.push(message),
      },
    });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed' });
    await h.until(() => logged.length === 1);
    expect(logged).toEqual(['listing the model catalog of fake again failed: the CLI could not list its models']);
    expect(catalog.listings).toEqual(['fake']);
  });

  it('a shutdown waits for a listing still running', async () => {
    let release!: () => void;
    const catalog = staleCatalog(['big'], ['big'], { gate: new Promise((resolve) => (release = resolve)) });
    const h = await harnesses({ fake: {}, deps: { defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: catalog.modelsFor } });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    await h.orchestrator.waitForRun(created.sessionId, created.runId);
    await h.until(() => catalog.listings.length === 1);
    let stopped = false;
    const stopping = h.orchestrator.shutdown().then(() => (stopped = true));
    // Long enough for everything else of the shutdown; it cannot end while the listing is held.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stopped).toBe(true);
  });
});
