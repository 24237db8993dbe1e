import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ADAPTER_CONTRACT_VERSION, type Adapter, type ResolvedCli } from '../../core/adapter.js';
import type { Catalog } from '../../core/catalog/index.js';
import { checkTurnModel } from '../../cli/commands/catalog.js';
import { createContext, type CliContext } from '../../cli/context.js';
import { Output } from '../../cli/output.js';

const CLI: ResolvedCli = { source: 'path', binaryPath: '/opt/fake', version: '9.9.9', range: '*', expected: undefined };
const CATALOG: Catalog = {
  models: [
    { id: 'custom:Local-0', displayName: 'Local', custom: true, deprecated: false, disabled: false, efforts: ['none'], defaultEffort: 'none' },
    { id: 'big', displayName: 'Big', custom: false, deprecated: false, disabled: false, efforts: ['low', 'high'] },
  ],
  tools: [],
};

let root: string;
let listings: number;
let stderr: string;

// A real context over a temp config, with a catalog-only fake adapter and a captured stderr.
async function context(withCatalog = true): Promise<CliContext> {
  const configPath = join(root, 'one-works.yaml');
  await writeFile(configPath, `state: {directory: ${join(root, 'state')}}\ncache: {directory: ${join(root, 'cache')}}\nworkspaces: {approved: [${root}]}\n`);
  const ctx = await createContext({ config: configPath }, { PATH: process.env.PATH });
  const err = new PassThrough();
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const fake: Adapter<unknown> = {
    contractVersion: ADAPTER_CONTRACT_VERSION,
    name: 'fake',
    configSchema: z.unknown(),
    prepare: async () => CLI,
    open: () => {
      throw new Error('not used');
    },
    ...(withCatalog
      ? {
          catalog: {
            cacheFacts: () => ({ v: 1 }),
            list: async () => {
              listings++;
              return CATALOG;
            },
          },
        }
      : {}),
  };
  return { ...ctx, out: new Output({ json: false, stdout: new PassThrough(), stderr: err }), adapter: () => fake };
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'ow-cli-catalog-'));
  listings = 0;
  stderr = '';
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const target = (model: string | undefined, effort: string | undefined) => ({ adapterName: 'fake', config: {}, cli: CLI, model, effort });

describe('checkTurnModel', () => {
  it('starts nothing for inherit or no model', async () => {
    const ctx = await context();
    expect((await checkTurnModel(ctx, target('inherit', 'high'))).effort).toBe('unchecked');
    expect((await checkTurnModel(ctx, target(undefined, 'high'))).effort).toBe('unchecked');
    expect(listings).toBe(0);
  });

  it('skips the check for an adapter without a catalog', async () => {
    const ctx = await context(false);
    expect(await checkTurnModel(ctx, target('anything', 'max'))).toEqual({ model: undefined, effort: 'unchecked', notes: [] });
  });

  it('accepts an effort that does not apply to a BYOK model and prints why on stderr', async () => {
    const ctx = await context();
    const check = await checkTurnModel(ctx, target('custom:Local-0', 'high'));
    expect(check.effort).toBe('not_applicable');
    expect(stderr).toBe('note: model custom:Local-0 has no reasoning effort levels; effort "high" does not apply and is ignored\n');
  });

  it('throws model_unavailable and effort_unsupported, listing once for both checks (cached)', async () => {
    const ctx = await context();
    await expect(checkTurnModel(ctx, target('bigg', undefined))).rejects.toMatchObject({ code: 'model_unavailable' });
    await expect(checkTurnModel(ctx, target('big', 'max'))).rejects.toMatchObject({ code: 'effort_unsupported' });
    expect(listings).toBe(1);
  });
});
