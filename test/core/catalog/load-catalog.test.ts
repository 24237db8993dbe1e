import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ADAPTER_CONTRACT_VERSION, type Adapter, type ResolvedCli } from '../../../core/adapter.js';
import { catalogCacheKey, loadCatalog, type Catalog, type CatalogRequest } from '../../../core/catalog/index.js';
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

describe('catalogCacheKey', () => {
  it('does not depend on key order and changes with the facts', () => {
    const a = catalogCacheKey('droid', { cliVersion: '0.225.2', ids: ['custom:A-0'], model: null });
    expect(catalogCacheKey('droid', { model: null, ids: ['custom:A-0'], cliVersion: '0.225.2' })).toBe(a);
    expect(catalogCacheKey('droid', { cliVersion: '0.225.2', ids: ['custom:B-0'], model: null })).not.toBe(a);
    expect(catalogCacheKey('droid', { cliVersion: '0.215.0', ids: ['custom:A-0'], model: null })).not.toBe(a);
    expect(a).toMatch(/^droid-[0-9a-f]{16}$/);
  });
});
