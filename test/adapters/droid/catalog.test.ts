import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  droidCatalogFacts,
  droidCatalogUnreachable,
  listDroidCatalog,
  toCatalogModel,
  toCatalogTool,
} from '../../../adapters/droid/catalog.js';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { ListModelsResultSchema, ListToolsResultSchema } from '../../../adapters/droid/wire.js';
import type { ResolvedCli } from '../../../core/adapter.js';
import type { OneWorksError } from '../../../core/errors.js';
import { CatalogModelSchema, CatalogToolSchema } from '../../../core/catalog/index.js';
import { withThrowawaySandbox } from '../../../core/session/throwaway.js';
import { expectGone } from '../../peers/fake-droid-harness.js';
import { writeFakeDroidBinary } from '../../peers/fake-droid-binary.js';
import type { FakeDroidFault } from '../../peers/fake-droid-config.js';

const CAPTURE = fileURLToPath(new URL('../../fixtures/droid/0.225.2/misc-methods.jsonl', import.meta.url));

// The result of the captured request with `method`, found by its id.
async function capturedResult(method: string): Promise<unknown> {
  const frames = (await readFile(CAPTURE, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { dir: string; frame: Record<string, unknown> });
  const request = frames.find((f) => f.dir === 'out' && f.frame.method === method);
  const response = frames.find((f) => f.dir === 'in' && f.frame.type === 'response' && f.frame.id === request?.frame.id);
  if (!response) throw new Error(`no ${method} response in ${CAPTURE}`);
  return response.frame.result;
}

describe('droid catalog parsing (captured 0.225.2 list_models / list_tools)', () => {
  it('maps every listed model, marking the BYOK entry custom with its only effort "none"', async () => {
    const wire = ListModelsResultSchema.parse(await capturedResult('droid.list_models'));
    const models = wire.models.map(toCatalogModel);
    expect(models).toHaveLength(wire.models.length);
    for (const model of models) CatalogModelSchema.parse(model);
    expect(models.find((m) => m.id === 'custom:Fake-0')).toEqual({
      id: 'custom:Fake-0',
      displayName: 'Fake',
      provider: 'generic-chat-completion-api',
      custom: true,
      deprecated: false,
      disabled: false,
      efforts: ['none'],
      defaultEffort: 'none',
    });
    expect(models.find((m) => m.id === 'claude-fable-5.1')).toEqual({
      id: 'claude-fable-5.1',
      displayName: 'Fable 5.1',
      provider: 'anthropic',
      custom: false,
      deprecated: false,
      disabled: false,
      efforts: ['off', 'low', 'medium', 'high', 'xhigh', 'max'],
      defaultEffort: 'high',
    });
    expect(models.filter((m) => m.custom).map((m) => m.id)).toEqual(['custom:Fake-0']);
    expect(models.find((m) => m.id === 'glm-5')).toMatchObject({ deprecated: true, efforts: ['none'] });
  });

  it("maps tools by the name the model calls them, keeping droid's own id", async () => {
    const wire = ListToolsResultSchema.parse(await capturedResult('droid.list_tools'));
    const tools = wire.tools.map(toCatalogTool);
    for (const tool of tools) CatalogToolSchema.parse(tool);
    expect(tools.find((t) => t.id === 'Execute')).toEqual({
      id: 'Execute',
      displayName: 'Execute',
      nativeId: 'execute-cli',
      category: 'execute',
      allowed: true,
    });
    expect(tools.find((t) => t.id === 'Read')).toEqual({
      id: 'Read',
      displayName: 'Read',
      nativeId: 'read-cli',
      category: 'read',
      allowed: true,
    });
    expect(tools.find((t) => t.id === 'ExitSpecMode')).toMatchObject({ allowed: false });
    expect(tools.find((t) => t.id === 'ConnectorSearch')).not.toHaveProperty('nativeId');
  });

  it('falls back to sensible defaults for a sparse entry', () => {
    expect(toCatalogModel({ id: 'custom:bare-0' })).toEqual({
      id: 'custom:bare-0',
      displayName: 'custom:bare-0',
      custom: true,
      deprecated: false,
      disabled: false,
      efforts: [],
    });
    expect(toCatalogModel({ id: 'm', disabled: true, disabledReason: 'no plan' })).toMatchObject({
      custom: false,
      disabled: true,
      disabledReason: 'no plan',
    });
    expect(toCatalogTool({ id: 'x-cli' })).toEqual({ id: 'x-cli', displayName: 'x-cli' });
  });
});

describe('droidCatalogFacts', () => {
  it('names the version, BYOK ids, credential names and tools model, and no secret', () => {
    const config = DroidConfigSchema.parse({
      model: 'custom:Local-0',
      customModels: [
        {
          model: 'm',
          displayName: 'Local',
          baseUrl: 'http://127.0.0.1:1/v1',
          apiKey: 'sk-facts-key-1',
          provider: 'openai',
          extraHeaders: { 'x-token': 'hdr-secret-2' },
        },
        { model: 'other-model', baseUrl: 'http://127.0.0.1:2/v1', apiKey: 'sk-facts-key-3', provider: 'generic-chat-completion-api' },
      ],
      credentials: { FACTORY_API_KEY: 'fk-facts-4' },
    });
    const cli = { version: '0.225.2' } as ResolvedCli;
    const facts = droidCatalogFacts(config, cli, {});
    expect(facts).toEqual({
      cliVersion: '0.225.2',
      customModelIds: ['custom:Local-0', 'custom:other-model-0'],
      credentials: ['FACTORY_API_KEY'],
      toolsModel: 'custom:Local-0',
      autonomy: 'low',
    });
    expect(droidCatalogFacts(config, cli, { modelId: 'gpt-5.4' }).toolsModel).toBe('gpt-5.4');
    const text = JSON.stringify(facts);
    for (const secret of ['sk-facts-key-1', 'hdr-secret-2', 'sk-facts-key-3', 'fk-facts-4', '127.0.0.1'])
      expect(text).not.toContain(secret);
  });
});

describe('listDroidCatalog against the fake droid', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ow-droid-catalog-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const cliAt = (binaryPath: string): ResolvedCli => ({
    source: 'path',
    binaryPath,
    version: '0.225.2',
    range: '>=0.225.0 <0.226.0',
    expected: { facts: { apiVersion: '1.0.0', protocolVersion: '1.220.0' }, qualifiedBy: 'table' },
  });

  // Runs listDroidCatalog in a throwaway sandbox, keeping the pids it started and the frames droid read.
  async function list(
    modelId: string | undefined,
    faults: FakeDroidFault[] = [],
  ): Promise<{ result: PromiseSettledResult<unknown>; pids: (number | undefined)[]; sent: Record<string, unknown>[] }> {
    const recordPath = join(dir, 'stdin.jsonl');
    const binary = await writeFakeDroidBinary(dir, { recordPath, faults });
    const pids: (number | undefined)[] = [];
    const config = DroidConfigSchema.parse({ autonomy: 'medium', startupTimeoutMs: 15_000, requestTimeoutMs: 15_000 });
    const [result] = await Promise.allSettled([
      withThrowawaySandbox({ purpose: 'catalog' }, ({ launch, workdir }) =>
        listDroidCatalog(
          config,
          cliAt(binary),
          async (spec, seed) => {
            const child = await launch(spec, seed);
            pids.push(child.pid);
            return child;
          },
          workdir,
          modelId === undefined ? {} : { modelId },
        ),
      ),
    ]);
    // A droid that dies at start reads nothing (no record file).
    const sent = (await readFile(recordPath, 'utf8').catch(() => ''))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    return { result: result!, pids, sent };
  }

  it('initializes without a prompt, lists models with includeDisabled, skips tools of an unlisted model, and stops droid', async () => {
    const { result, pids, sent } = await list('not-a-model');
    expect(result.status).toBe('fulfilled');
    const catalog = (result as PromiseFulfilledResult<{ models: unknown[]; tools: unknown[] }>).value;
    expect(catalog.tools).toEqual([]);
    expect(catalog.models).toEqual([
      {
        id: 'gpt-5.6-sol',
        displayName: 'GPT 5.6 Sol',
        provider: 'openai',
        custom: false,
        deprecated: false,
        disabled: false,
        efforts: ['low', 'medium', 'high'],
        defaultEffort: 'high',
      },
      {
        id: 'gpt-5.6-sol-mini',
        displayName: 'GPT 5.6 Sol Mini',
        provider: 'openai',
        custom: false,
        deprecated: false,
        disabled: false,
        efforts: ['low', 'high'],
        defaultEffort: 'low',
      },
    ]);
    expect(sent.map((frame) => frame.method)).toEqual(['droid.initialize_session', 'droid.list_models']);
    expect(sent[1]?.params).toEqual({ includeDisabled: true });
    expect(pids).toHaveLength(1);
    expectGone(pids[0]!);
  });

  it('fails with probe_failed when droid rejects list_tools, and still stops droid', async () => {
    const { result, pids, sent } = await list(undefined, ['list-tools-fails']);
    expect(result.status).toBe('rejected');
    const error = (result as PromiseRejectedResult).reason as { code: string; message: string };
    expect(error.code).toBe('probe_failed');
    expect(error.message).toMatch(/^listing models and tools of droid 0\.225\.2 at .* failed: .*does not simulate droid\.list_tools/);
    expect(sent.map((frame) => frame.method)).toEqual(['droid.initialize_session', 'droid.list_models', 'droid.list_tools']);
    expect(sent[0]?.params).toMatchObject({ autonomyLevel: 'medium' });
    expect(sent[2]?.params).toEqual({ autonomyLevel: 'medium' });
    expectGone(pids[0]!);
  });

  // What the model check before a turn does with a failed listing (core/catalog loadTurnCatalog).
  it('counts a droid that cannot start as unreachable only with fallback oneshot; a refused request never', async () => {
    const oneshot = DroidConfigSchema.parse({});
    const none = DroidConfigSchema.parse({ fallback: 'none' });
    const { result: died } = await list(undefined, ['die-at-start']);
    expect(died.status).toBe('rejected');
    const startError = (died as PromiseRejectedResult).reason as OneWorksError;
    expect(startError.code).toBe('probe_failed');
    expect(droidCatalogUnreachable(oneshot, startError)).toMatch(/one-shot mode/);
    expect(droidCatalogUnreachable(none, startError)).toBeUndefined();
    const { result: refused } = await list(undefined, ['list-tools-fails']);
    expect(droidCatalogUnreachable(oneshot, (refused as PromiseRejectedResult).reason as OneWorksError)).toBeUndefined();
  });
});
