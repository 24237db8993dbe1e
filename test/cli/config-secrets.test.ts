import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { stringify } from 'yaml';
import { configSecrets } from '../../cli/config-secrets.js';
import { ADAPTER_CREDENTIALS, CONFIG_SCHEMA, createContext } from '../../cli/context.js';
import { collectSecrets } from '../../core/config/index.js';
import { objectKeys, schemaAt, unwrapSchema } from '../../core/config/schema-walk.js';

// Issue 15: `serve` collects the config's secrets (for every session's redactor) without making
// the adapter blocks the file leaves out whose credentials the environment does not set: their
// defaults hold no secret. What it finds is what a walk of the whole config finds.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ow-config-secrets-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function contextOf(config: Record<string, unknown> | undefined, env: Record<string, string>) {
  const path = join(dir, 'one-works.yaml');
  if (config) await writeFile(path, stringify(config));
  return createContext(config ? { config: path } : {}, { HOME: dir, XDG_STATE_HOME: join(dir, 'state'), ...env }, { adapters: false });
}

const sorted = (secrets: string[]): string[] => [...secrets].sort();

// True while the block `name` the file left out is still unmade (read, it becomes a value).
function unmade(config: { adapters: unknown }, name: string): boolean {
  return Object.getOwnPropertyDescriptor(config.adapters, name)?.get !== undefined;
}

// Every `.meta({ env })` name below `schema` (lazy schemas built), with the path where it is.
function envDefaults(schema: z.ZodType, path: string, into: Array<{ path: string; env: string }> = [], seen = new Set<z.ZodType>()) {
  const { schema: core, meta } = unwrapSchema(schema);
  if (meta.env) into.push({ path, env: meta.env });
  if (seen.has(core)) return into;
  seen.add(core);
  const def = core._zod.def as unknown as {
    shape?: Record<string, z.ZodType>;
    element?: z.ZodType;
    valueType?: z.ZodType;
    options?: z.ZodType[];
    left?: z.ZodType;
    right?: z.ZodType;
    out?: z.ZodType;
  };
  for (const [key, child] of Object.entries(def.shape ?? {})) envDefaults(child, `${path}.${key}`, into, seen);
  for (const child of [def.element, def.valueType, def.left, def.right, def.out, ...(def.options ?? [])]) {
    if (child) envDefaults(child, `${path}.*`, into, seen);
  }
  return into;
}

describe('configSecrets', () => {
  it('every environment default of an adapter block is one of its credentials (ADAPTER_CREDENTIALS)', () => {
    const blocks = objectKeys(schemaAt(CONFIG_SCHEMA, ['adapters'])!)!;
    expect(blocks).toContain('droid');
    const found: string[] = [];
    for (const name of blocks) {
      const credentials = Object.keys(ADAPTER_CREDENTIALS[name] ?? {});
      for (const { path, env } of envDefaults(schemaAt(CONFIG_SCHEMA, ['adapters', name])!, `adapters.${name}`)) {
        expect(credentials, `${path} defaults to $${env}`).toContain(env);
        found.push(env);
      }
    }
    // The walk does find them: every credential is an environment default of its block.
    expect(sorted(found)).toEqual(sorted(Object.values(ADAPTER_CREDENTIALS).flatMap((credentials) => Object.keys(credentials))));
  });

  it('leaves a block the file leaves out unmade when the environment sets none of its credentials', async () => {
    const ctx = await contextOf({ adapters: { droid: { credentials: { FACTORY_API_KEY: 'fk-in-file-1234' } } } }, {});
    expect(unmade(ctx.config, 'claude-code')).toBe(true);
    expect(configSecrets(ctx)).toEqual(['fk-in-file-1234']);
    for (const name of ['claude-code', 'codex', 'gemini', 'process', 'acp', 'droid-acp']) expect(unmade(ctx.config, name), name).toBe(true);
    // The whole walk makes them all, and finds no other secret.
    expect(collectSecrets(CONFIG_SCHEMA, ctx.config)).toEqual(['fk-in-file-1234']);
    expect(unmade(ctx.config, 'claude-code')).toBe(false);
  });

  it('finds what a walk of the whole config finds: secrets in the file, credentials from the environment, blocks named or not', async () => {
    const everyCredential = Object.fromEntries(
      Object.values(ADAPTER_CREDENTIALS)
        .flatMap((credentials) => Object.keys(credentials))
        .map((name, i) => [name, `env-secret-${i}-${name.toLowerCase()}`]),
    );
    const cases: Array<{ config: Record<string, unknown> | undefined; env: Record<string, string> }> = [
      { config: undefined, env: {} },
      { config: undefined, env: everyCredential },
      {
        config: { adapters: { droid: { effort: 'low' } } },
        env: { ANTHROPIC_API_KEY: 'sk-ant-from-env-1', GEMINI_API_KEY: 'gem-from-env-2' },
      },
      {
        config: {
          adapters: {
            'claude-code': { enabled: true, env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', EXTRA_TOKEN: 'cc-env-secret-3' } },
            codex: { credentials: { OPENAI_API_KEY: 'sk-openai-in-file-4' } },
            process: { enabled: true, harnesses: { loop: { command: '/bin/true', env: { LOOP_KEY: 'loop-secret-5' } } } },
          },
        },
        env: { CODEX_API_KEY: 'codex-from-env-6', FACTORY_TOKEN: 'factory-from-env-7' },
      },
      { config: { state: { backend: 'postgres', postgres: { url: 'postgres://ow:pg-pass-8@127.0.0.1/ow' } } }, env: everyCredential },
    ];
    for (const { config, env } of cases) {
      const ctx = await contextOf(config, env);
      const secrets = configSecrets(ctx);
      const context = JSON.stringify({ config, env });
      expect(sorted(secrets), context).toEqual(sorted(collectSecrets(CONFIG_SCHEMA, ctx.config)));
      for (const value of Object.values(env)) expect(secrets, context).toContain(value);
      await rm(join(dir, 'one-works.yaml'), { force: true });
    }
  });
});
