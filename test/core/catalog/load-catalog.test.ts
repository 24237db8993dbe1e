import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ADAPTER_CONTRACT_VERSION, type Adapter, type ResolvedCli } from '../../../core/adapter.js';
import {
  catalogCacheKey,
  loadCatalog,
  loadTurnCatalog,
  readCatalogEntry,
  type Catalog,
  type CatalogRequest,
} from '../../../core/catalog/index.js';
import { OneWorksError } from '../../../core/errors.js';
import { checkFakeFacts, FAKE_CLI } from '../../support/fake-adapter.js';

const SECRET = 'sk-load-catalog-secret-99';

const CLI: ResolvedCli = {
  source: 'path',
  binaryPath: '/opt/fake/bin/fake',
  version: '1.2.3',
  range: '>=1.2.0 <1.3.0',
  expected: undefined,
};

interface Recorder {
  adapter: Adapter<unknown>;
  requests: CatalogRequest[];
  workdirs: string[];
}

// A catalog-only adapter whose listing echoes a secret (as a CLI might, e.g. in an error string).
function fakeAdapter(list?: () => Promise<Catalog>): Recorder {
  const requests: CatalogRequest[] = [];
  const workdirs: string[] = [];
  const adapter: Adapter<unknown> = {
    contractVersion: ADAPTER_CONTRACT_VERSION,
    name: 'fake',
    cli: FAKE_CLI,
    checkVersionFacts: checkFakeFacts,
    configSchema: z.unknown(),
    prepare: async () => CLI,
    open: () => {
      throw new Error('not used');
    },
    catalog: {
      cacheFacts: (_config, cli, request) => ({ cliVersion: cli.version, model: request.modelId ?? null }),
      list: async (_config, _cli, _launch, workdir, request) => {
        requests.push(request);
        workdirs.push(workdir);
        if (list) return list();
        return {
          models: [{ id: 'm1', displayName: `M1 (key ${SECRET})`, custom: true, deprecated: false, disabled: false, efforts: ['none'] }],
          tools: [{ id: 'Read', displayName: 'Read', category: 'read', allowed: true }],
        };
      },
    },
  };
  return { adapter, requests, workdirs };
}

let cacheDir: string;
beforeEach(async () => {
  cacheDir = await mkdtemp(join(tmpdir(), 'ow-load-catalog-'));
});
afterEach(async () => {
  await rm(cacheDir, { recursive: true, force: true });
});

const load = (adapter: Adapter<unknown>, extra: { request?: CatalogRequest; force?: boolean } = {}) =>
  loadCatalog({ adapter, config: {}, cli: CLI, cacheDir, secrets: [SECRET], ...extra });

describe('loadCatalog', () => {
  it('lists once, caches the redacted catalog under <cache>/catalog/<adapter>-<hash>.json, then serves it', async () => {
    const fake = fakeAdapter();
    const first = await load(fake.adapter);
    expect(first.fromCache).toBe(false);
    expect(first.value.models[0]?.displayName).toBe('M1 (key [REDACTED])');
    const second = await load(fake.adapter);
    expect(second).toEqual({ ...first, fromCache: true });
    expect(fake.requests).toEqual([{}]);
    const files = await readdir(join(cacheDir, 'catalog'));
    expect(files).toEqual([`${catalogCacheKey('fake', { cliVersion: '1.2.3', model: null })}.json`]);
    expect(files[0]).toMatch(/^fake-[0-9a-f]{16}\.json$/);
    expect(await readFile(join(cacheDir, 'catalog', files[0]!), 'utf8')).not.toContain(SECRET);
  });

  it('gives the listing a throwaway working directory that is gone afterwards', async () => {
    const fake = fakeAdapter();
    await load(fake.adapter);
    expect(fake.workdirs).toHaveLength(1);
    await expect(access(fake.workdirs[0]!)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("keys entries by the adapter's facts: another request lists again, --refresh forces", async () => {
    const fake = fakeAdapter();
    await load(fake.adapter);
    await load(fake.adapter, { request: { modelId: 'm1' } });
    await load(fake.adapter, { force: true });
    expect(fake.requests).toEqual([{}, { modelId: 'm1' }, {}]);
    expect(await readdir(join(cacheDir, 'catalog'))).toHaveLength(2);
  });

  it('refuses an adapter without a catalog', async () => {
    const { catalog: _, ...plain } = fakeAdapter().adapter;
    await expect(load(plain)).rejects.toMatchObject({ code: 'usage', message: 'adapter fake cannot list models or tools' });
  });

  it('wraps a foreign failure as probe_failed without the secret, and caches nothing', async () => {
    const fake = fakeAdapter(async () => {
      throw new Error(`connection refused with ${SECRET}`);
    });
    const error = await load(fake.adapter).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OneWorksError);
    expect(error).toMatchObject({
      code: 'probe_failed',
      message: 'listing the catalog of fake 1.2.3 failed: Error: connection refused with [REDACTED]',
    });
    await expect(readdir(join(cacheDir, 'catalog'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("redacts a secret from an adapter's OneWorksError, keeping its code", async () => {
    const own = new OneWorksError('peer_error', `droid said: bad key ${SECRET}`, { data: { echoed: SECRET } });
    const fake = fakeAdapter(async () => {
      throw own;
    });
    const error = await load(fake.adapter).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'peer_error',
      message: 'droid said: bad key [REDACTED]',
      data: { echoed: '[REDACTED]' },
      cause: own,
    });
  });

  it("passes an adapter's OneWorksError without secrets through unchanged", async () => {
    const own = new OneWorksError('request_timeout', 'list_models timed out');
    const fake = fakeAdapter(async () => {
      throw own;
    });
    await expect(load(fake.adapter)).rejects.toBe(own);
  });
});

describe('readCatalogEntry (an orchestrator preparing in idle time)', () => {
  it('reads the cached entry whatever its age and never lists', async () => {
    const fake = fakeAdapter();
    const options = { adapter: fake.adapter, config: {}, cli: CLI, cacheDir, secrets: [SECRET] };
    expect(await readCatalogEntry(options)).toBeUndefined();
    expect(fake.requests).toEqual([]);
    const listed = await load(fake.adapter);
    // An hour later the entry is long past its freshness: still read as it is, still no listing.
    expect(await readCatalogEntry({ ...options, now: () => listed.fetchedAt + 3_600_000 })).toEqual(listed.value);
    expect(fake.requests).toEqual([{}]);
  });
});

describe('catalogCacheKey', () => {
  it('does not depend on key order and changes with the facts', () => {
    const a = catalogCacheKey('droid', { cliVersion: '0.225.2', ids: ['custom:A-0'], model: null });
    expect(catalogCacheKey('droid', { model: null, ids: ['custom:A-0'], cliVersion: '0.225.2' })).toBe(a);
    expect(catalogCacheKey('droid', { cliVersion: '0.225.2', ids: ['custom:B-0'], model: null })).not.toBe(a);
    expect(catalogCacheKey('droid', { cliVersion: '0.215.0', ids: ['custom:A-0'], model: null })).not.toBe(a);
    expect(a).toMatch(/^droid-[0-9a-f]{16}$/);
  });
});

describe('loadTurnCatalog (the model check before a turn)', () => {
  // A fake whose listing works until `down` is set, then fails like a CLI that cannot start; it
  // declares that its turns go on without the CLI only for that failure.
  function flapping(): { adapter: Adapter<unknown>; setDown(error: OneWorksError | undefined): void; listings(): number } {
    let down: OneWorksError | undefined;
    const fake = fakeAdapter(async () => {
      if (down) throw down;
      return { models: [{ id: 'm1', displayName: 'M1', custom: false, deprecated: false, disabled: false, efforts: [] }], tools: [] };
    });
    const adapter: Adapter<unknown> = {
      ...fake.adapter,
      catalog: {
        ...fake.adapter.catalog!,
        unreachable: (_config, error) => (error.code === 'process_exited' ? 'its turns run without it' : undefined),
      },
    };
    return { adapter, setDown: (error) => (down = error), listings: () => fake.requests.length };
  }
  let clock = 1_000_000;
  const turnLoad = (adapter: Adapter<unknown>) =>
    loadTurnCatalog({ adapter, config: {}, cli: CLI, cacheDir, secrets: [SECRET], ttlMs: 60_000, now: () => clock });

  it('serves a fresh listing without a note while the CLI starts', async () => {
    const fake = flapping();
    expect(await turnLoad(fake.adapter)).toEqual({ catalog: expect.objectContaining({ models: [expect.objectContaining({ id: 'm1' })] }) });
  });

  it('uses the last known catalog, however old, with a note, when the CLI cannot start', async () => {
    const fake = flapping();
    await turnLoad(fake.adapter);
    const listedAt = clock;
    clock += 3_600_000;
    fake.setDown(new OneWorksError('process_exited', `fake exited with code 1 (key ${SECRET})`));
    const turn = await turnLoad(fake.adapter);
    // It did try: an expired entry is never served without asking the CLI first.
    expect(fake.listings()).toBe(2);
    expect(turn.catalog?.models.map((m) => m.id)).toEqual(['m1']);
    expect(turn.note).toContain('fake cannot start to list its models (process_exited: fake exited with code 1');
    expect(turn.note).toContain("its turns run without it; the model was checked against fake's last known catalog, listed ");
    expect(turn.note).toContain(new Date(listedAt).toISOString());
    expect(turn.note).not.toContain(SECRET);
    // A plain load (`one-works models`) never serves it.
    await expect(load(fake.adapter)).rejects.toMatchObject({ code: 'process_exited' });
  });

  it('checks nothing, with a note, when the CLI cannot start and no catalog was ever listed', async () => {
    const fake = flapping();
    fake.setDown(new OneWorksError('process_exited', 'fake exited with code 1'));
    const turn = await turnLoad(fake.adapter);
    expect(turn.catalog).toBeUndefined();
    expect(turn.note).toMatch(/no catalog of fake was ever listed here, so the model could not be checked and is passed to fake as is$/);
  });

  it('rejects any other failure, even with an old entry on disk', async () => {
    const fake = flapping();
    await turnLoad(fake.adapter);
    clock += 120_000;
    fake.setDown(new OneWorksError('protocol_error', 'fake answered nonsense'));
    await expect(turnLoad(fake.adapter)).rejects.toMatchObject({ code: 'protocol_error' });
  });

  it('with allowStaleMs, serves an entry past its minute at once with its listing, which the caller runs', async () => {
    const fake = flapping();
    await turnLoad(fake.adapter);
    clock += 60_000 + 5_000;
    const stale = await loadTurnCatalog(
      { adapter: fake.adapter, config: {}, cli: CLI, cacheDir, secrets: [SECRET], ttlMs: 60_000, now: () => clock },
      { allowStaleMs: 10_000 },
    );
    expect(stale.catalog?.models.map((m) => m.id)).toEqual(['m1']);
    expect(fake.listings()).toBe(1);
    const fresh = await stale.refresh!();
    expect(fresh).toEqual({ catalog: expect.objectContaining({ models: [expect.objectContaining({ id: 'm1' })] }) });
    expect(fake.listings()).toBe(2);
    // Fresh now: served without a listing and without a refresh to run.
    expect(
      await loadTurnCatalog(
        { adapter: fake.adapter, config: {}, cli: CLI, cacheDir, secrets: [], ttlMs: 60_000, now: () => clock },
        { allowStaleMs: 10_000 },
      ),
    ).toEqual({
      catalog: expect.objectContaining({ models: [expect.objectContaining({ id: 'm1' })] }),
    });
    // Past the bound it is listed before it is served, as without the option.
    clock += 60_000 + 10_000;
    const waited = await loadTurnCatalog(
      { adapter: fake.adapter, config: {}, cli: CLI, cacheDir, secrets: [], ttlMs: 60_000, now: () => clock },
      { allowStaleMs: 10_000 },
    );
    expect(waited.refresh).toBeUndefined();
    expect(fake.listings()).toBe(3);
  });

  it('rejects for an adapter that does not go on without its CLI', async () => {
    const fake = fakeAdapter(async () => {
      throw new OneWorksError('process_exited', 'fake exited with code 1');
    });
    await expect(turnLoad(fake.adapter)).rejects.toMatchObject({ code: 'process_exited' });
  });
});
