import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_NAMES, createContext } from '../../cli/context.js';
import { BLOCK_ENV_DEFAULTS, environmentFingerprint, environmentParts } from '../../cli/daemon/fingerprint.js';

// The adapter blocks a config file leaves out are built only when a command reads them; the
// fingerprint counts them by the keys they take from the environment (BLOCK_ENV_DEFAULTS).

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function emptyConfig(): Promise<{ config: string; root: string }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-fp-blocks-')));
  roots.push(root);
  const config = join(root, 'one-works.yaml');
  await writeFile(config, 'workspaces: { approved: [/tmp] }\n');
  return { config, root };
}

// Every block's leaves by dotted key path (arrays are leaves).
function leaves(value: unknown, path: string[] = [], into = new Map<string, unknown>()): Map<string, unknown> {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) leaves(child, [...path, key], into);
  } else if (path.length > 0) {
    into.set(path.join('.'), value);
  }
  return into;
}

describe('environment fingerprint of adapter blocks the config file leaves out', () => {
  it('knows every key each adapter block fills from the environment (BLOCK_ENV_DEFAULTS matches the schemas)', async () => {
    const { config, root } = await emptyConfig();
    // Every variable the loader reads has a value of its own, so each key filled from one shows which.
    const base: Record<string, string> = {
      PATH: '/usr/bin',
      HOME: root,
      XDG_CONFIG_HOME: root,
      XDG_STATE_HOME: root,
      XDG_CACHE_HOME: root,
    };
    const env = new Proxy(base, {
      get: (target, name) => (typeof name !== 'string' ? undefined : (target[name] ?? `from-env-${name}`)),
    });
    const ctx = await createContext({ config }, env);
    const blocks = [...ADAPTER_NAMES, 'acp'];
    expect(Object.keys(ctx.config.adapters).sort()).toEqual([...blocks].sort());
    const found: Record<string, Record<string, string>> = {};
    for (const block of blocks) {
      for (const [path, value] of leaves((ctx.config.adapters as Record<string, unknown>)[block])) {
        if (typeof value === 'string' && value.startsWith('from-env-')) {
          found[block] = { ...found[block], [path]: value.slice('from-env-'.length) };
        }
      }
    }
    expect(found).toEqual(BLOCK_ENV_DEFAULTS);
  });

  it('builds none of them, and gives the same fingerprint before and after a command built them all', async () => {
    const { config } = await emptyConfig();
    const env = { PATH: '/usr/bin', HOME: '/home/fp', XDG_STATE_HOME: '/tmp/fp-state', FACTORY_API_KEY: 'fk-1', OPENAI_API_KEY: 'ok-1' };
    const ctx = await createContext({ config }, env);
    const adapters = ctx.config.adapters as Record<string, unknown>;
    const built = (): string[] =>
      Object.keys(adapters).filter((name) => Object.getOwnPropertyDescriptor(adapters, name)?.get === undefined);
    const before = environmentFingerprint(ctx);
    expect(built()).toEqual([]);
    expect(environmentParts(ctx).get('config adapters.codex.credentials.OPENAI_API_KEY')).toBe('"ok-1"');
    // A server builds the blocks of the sessions it runs: its fingerprint stays the one it announced.
    for (const name of Object.keys(adapters)) void adapters[name];
    expect(built().sort()).toEqual(Object.keys(adapters).sort());
    expect(environmentFingerprint(ctx)).toBe(before);
  });
});
