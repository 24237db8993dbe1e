import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { createConfigSchema, loadConfig, locateState } from '../../../core/config/index.js';
import { keepConfigValue, useConfigValueCache } from '../../../core/config/value-cache.js';

// core/config/value-cache.ts: a config file's parsed YAML kept for the next command that reads
// the same text. Each case loads twice with the cache on and compares with a load without it.

const schema = createConfigSchema({ droid: DroidConfigSchema });
const SECRET = 'sk-literal-0123456789abcdef';

let dir: string;
let cacheDir: string;
let configPath: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ow-value-cache-'));
  cacheDir = join(dir, 'code-cache');
  configPath = join(dir, 'one-works.yaml');
});
afterEach(async () => {
  useConfigValueCache(undefined);
  await rm(dir, { recursive: true, force: true });
});

// One load of the config file: its config, explicit keys and the secrets it handed on.
async function load(env: Record<string, string> = { HOME: '/h' }) {
  const secrets: string[] = [];
  const loaded = await loadConfig({ schema, cwd: dir, env, onSecrets: (found) => secrets.push(...found) });
  // The adapter block read, so that what it holds is compared too.
  return { config: JSON.parse(JSON.stringify(loaded.config)) as unknown, keys: [...loaded.explicitKeys].sort(), secrets: secrets.sort() };
}

// The load without any cache, then two with it (the first keeps the value, the second reads it).
async function threeLoads(env?: Record<string, string>) {
  useConfigValueCache(undefined);
  const plain = await load(env);
  useConfigValueCache(cacheDir);
  const first = await load(env);
  const second = await load(env);
  return { plain, first, second };
}

const keptFiles = (): string[] => {
  try {
    return readdirSync(cacheDir).filter((name) => name.startsWith('config-value-'));
  } catch {
    return [];
  }
};
const keptText = (): string =>
  keptFiles()
    .map((name) => readFileSync(join(cacheDir, name), 'utf8'))
    .join('\n');

const CONFIG = [
  'state: { directory: /srv/state }',
  'workspaces:',
  '  approved: [/srv/a, { path: /srv/b, isolation: worktree }]',
  'adapters:',
  '  droid:',
  '    effort: high',
  '    model: "custom:Scripted-0"',
  '    env: { FACTORY_AIRGAP_ENABLED: "true" }',
  `    customModels: [{ model: m, displayName: M, baseUrl: "http://127.0.0.1:9/v1", apiKey: ${SECRET}, provider: generic-chat-completion-api, maxOutputTokens: 100 }]`,
  '',
].join('\n');

describe('the kept value of a config file', () => {
  it('gives the same config, keys and secrets as a parse, and is the value read the next time', async () => {
    await writeFile(configPath, CONFIG);
    const { plain, first, second } = await threeLoads();
    expect(first).toEqual(plain);
    expect(second).toEqual(plain);
    expect(keptFiles()).toHaveLength(1);
    // The next load takes the kept value, not the YAML: a value changed in the file (not the text) shows.
    const [name] = keptFiles();
    const file = join(cacheDir, name!);
    await writeFile(file, (await readFile(file, 'utf8')).replace('/srv/state', '/srv/elsewhere'));
    expect(((await load()).config as { state: { directory: string } }).state.directory).toBe('/srv/elsewhere');
    expect(locateState({ cwd: dir, env: { HOME: '/h' } })?.stateDir).toBe('/srv/elsewhere');
  });

  it('never holds a secret the file writes out: the string is taken from the text again', async () => {
    await writeFile(configPath, CONFIG);
    const { plain, second } = await threeLoads();
    expect(plain.secrets).toContain(SECRET);
    expect(second.secrets).toContain(SECRET);
    expect(keptText()).not.toBe('');
    expect(keptText()).not.toContain(SECRET);
    expect(second).toEqual(plain);
  });

  it('keeps a ${VAR} reference as written and expands it at each load', async () => {
    await writeFile(configPath, CONFIG.replace(SECRET, '"${MY_KEY}"').replace('/srv/state', '"${STATE_DIR:-/srv/state}"'));
    const { plain, second } = await threeLoads({ HOME: '/h', MY_KEY: SECRET });
    expect(second).toEqual(plain);
    expect(keptText()).toContain('${MY_KEY}');
    expect(keptText()).not.toContain(SECRET);
    const other = await load({ HOME: '/h', MY_KEY: 'sk-another-key-987654', STATE_DIR: '/srv/other' });
    expect(other.secrets).toContain('sk-another-key-987654');
    expect((other.config as { state: { directory: string } }).state.directory).toBe('/srv/other');
  });

  it('is not used for another text: an edited file is parsed, and its value replaces the old one', async () => {
    await writeFile(configPath, CONFIG);
    await threeLoads();
    await writeFile(configPath, CONFIG.replace('effort: high', 'effort: low'));
    const edited = await load();
    expect((edited.config as { adapters: { droid: { effort: string } } }).adapters.droid.effort).toBe('low');
    expect(keptFiles()).toHaveLength(1);
    expect(keptText()).toContain('"effort":"low"');
  });

  it('fails as a parse fails, with its positions, when the kept value no longer loads', async () => {
    await writeFile(configPath, CONFIG.replace(SECRET, '"${MY_KEY}"'));
    await threeLoads({ HOME: '/h', MY_KEY: SECRET });
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => 'loaded',
        (error: unknown) => String((error as Error).message),
      );
    useConfigValueCache(undefined);
    const plain = await failure(load({ HOME: '/h' }));
    useConfigValueCache(cacheDir);
    const kept = await failure(load({ HOME: '/h' }));
    expect(plain).toMatch(/one-works\.yaml:9:\d+: .*MY_KEY is not set/);
    expect(kept).toBe(plain);
  });

  it('keeps nothing JSON would change, nor a secret the text holds only escaped', async () => {
    useConfigValueCache(cacheDir);
    for (const value of [
      { a: Number.POSITIVE_INFINITY },
      { a: Number.NaN },
      { a: -0 },
      { a: [new Date(0)] },
      JSON.parse('{"__proto__": {}}'),
    ]) {
      keepConfigValue(configPath, 'a: 1\n', value, []);
    }
    expect(keptFiles()).toEqual([]);
    keepConfigValue(configPath, 'a: 1\n', { a: 1 }, []);
    expect(keptFiles()).toHaveLength(1);
    await rm(cacheDir, { recursive: true });
    await writeFile(configPath, CONFIG.replace(SECRET, `"sk-escaped\\x41-0123456789"`));
    const { plain, second } = await threeLoads();
    expect(plain.secrets).toContain('sk-escapedA-0123456789');
    expect(second).toEqual(plain);
    expect(keptFiles()).toEqual([]);
  });

  it('writes nothing unless a directory is given', async () => {
    await writeFile(configPath, CONFIG);
    useConfigValueCache(undefined);
    await load();
    await load();
    expect(keptFiles()).toEqual([]);
  });
});
