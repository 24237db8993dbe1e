import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../core/catalog/index.js';
import type { ModelsForOptions } from '../../../core/orchestrator/index.js';
import { useOrchestratorHarnesses } from './orchestrator-harness.js';

// Acceptance with a catalog past its freshness (ModelsForOptions.stale): settings the stale models
// allow are accepted without a listing; a model (or effort) the stale models do not allow waits
// for the fresh listing, which alone refuses it or lets it through.

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
function staleCatalog(stale: string[], fresh: string[], options: { failListing?: boolean } = {}) {
  const listings: string[] = [];
  let current = stale;
  const modelsFor = async (adapter: string, forTurn?: ModelsForOptions): Promise<CatalogModel[]> => {
    const listing = async (): Promise<CatalogModel[]> => {
      listings.push(adapter);
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
  it('accepts a model (and effort) the stale catalog allows without listing it, on create and on send', async () => {
    const catalog = staleCatalog(['big', 'small'], ['big', 'small', 'new']);
    const h = await harnesses({
      fake: {},
      deps: { defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: catalog.modelsFor },
    });
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    expect(created.settings).toEqual({ model: 'big', autonomy: 'low' });
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed' });
    const next = await h.orchestrator.sendMessage({ sessionId: created.sessionId, prompt: 'two', model: 'small', effort: 'high' });
    expect(next.settings).toEqual({ model: 'small', effort: 'high', autonomy: 'low' });
    expect(await h.orchestrator.waitForRun(created.sessionId, next.runId)).toMatchObject({ status: 'completed' });
    expect(catalog.listings).toEqual([]);
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

  it('a fresh listing that fails refuses what the stale catalog did not allow, with the listing’s error', async () => {
    const catalog = staleCatalog(['big'], ['big', 'new'], { failListing: true });
    const h = await harnesses({ fake: {}, deps: { defaultsFor: () => ({ model: 'big', autonomy: 'low' }), modelsFor: catalog.modelsFor } });
    await expect(h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one', model: 'new' })).rejects.toThrow(
      'the CLI could not list its models',
    );
    expect(catalog.listings).toEqual(['fake']);
    expect(await h.orchestrator.list()).toEqual([]);
    // What the stale catalog allows still runs.
    const created = await h.orchestrator.createSession({ adapter: 'fake', workspace: h.root, prompt: 'one' });
    expect(await h.orchestrator.waitForRun(created.sessionId, created.runId)).toMatchObject({ status: 'completed' });
  });
});
