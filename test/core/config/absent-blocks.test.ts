import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CONFIG_SCHEMA } from '../../../cli/context.js';
import { applyEnvDefaults, createConfigSchema, loadConfig, parseConfigText } from '../../../core/config/index.js';
import { isOneWorksError } from '../../../core/errors.js';
import { lazySchema } from '../../../core/lazy-schema.js';

// The adapter blocks a file leaves out are built when first read, not at load: to whoever reads the
// config they are what a whole parse gives (defaults, and credentials from the environment), and
// their secrets reach the caller's redactor before the value is handed out.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ow-absent-blocks-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function load(text: string, env: Record<string, string>, onSecrets?: (secrets: string[]) => void) {
  await writeFile(join(dir, 'one-works.yaml'), text);
  return loadConfig({ schema: CONFIG_SCHEMA, cwd: dir, env: { HOME: dir, ...env }, ...(onSecrets ? { onSecrets } : {}) });
}

// What the whole schema gives for the same text and environment, every block parsed at once.
function wholeParse(text: string, env: Record<string, string>): unknown {
  const parsed = parseConfigText(text, { schema: CONFIG_SCHEMA, env, file: 'one-works.yaml' });
  return applyEnvDefaults(CONFIG_SCHEMA, CONFIG_SCHEMA.parse(JSON.parse(JSON.stringify(parsed))), env);
}

describe('adapter blocks the file leaves out', () => {
  it('are built only when read, each once', async () => {
    const built: string[] = [];
    const block = (name: string) =>
      lazySchema(() => {
        built.push(name);
        return z.strictObject({ enabled: z.boolean().default(false), model: z.string().default(`${name}-model`) });
      });
    const schema = createConfigSchema({ alpha: block('alpha'), beta: block('beta'), gamma: block('gamma') });
    await writeFile(join(dir, 'one-works.yaml'), 'adapters:\n  alpha: { enabled: true }\n');
    const { config } = await loadConfig({ schema, cwd: dir, env: { HOME: dir } });
    expect(built).toEqual(['alpha']);
    expect(config.adapters.beta).toEqual({ enabled: false, model: 'beta-model' });
    expect(built).toEqual(['alpha', 'beta']);
    // In the schema's order, as a whole parse gives them; gamma is built as JSON reads it.
    expect(JSON.stringify(config.adapters)).toBe(
      JSON.stringify({
        alpha: { enabled: true, model: 'alpha-model' },
        beta: { enabled: false, model: 'beta-model' },
        gamma: { enabled: false, model: 'gamma-model' },
      }),
    );
    expect(built).toEqual(['alpha', 'beta', 'gamma']);
  });

  it('read as a whole parse of the same file gives them, defaults and credentials from the environment included', async () => {
    const text = 'adapters:\n  droid:\n    effort: low\n  process:\n    harnesses:\n      loop: { command: /bin/true }\n';
    const env = { HOME: dir, OPENAI_API_KEY: 'sk-openai-from-env-4711', ANTHROPIC_API_KEY: 'sk-ant-from-env-4712' };
    const { config } = await load(text, env);
    const whole = wholeParse(text, env) as { adapters: Record<string, unknown> };
    expect(JSON.parse(JSON.stringify(config.adapters))).toEqual(whole.adapters);
    expect(config.adapters.codex.credentials).toEqual({
      OPENAI_API_KEY: 'sk-openai-from-env-4711',
    });
  });

  it('hand their secrets to onSecrets when first read, before the value; the named blocks at load', async () => {
    const text = 'adapters:\n  droid:\n    credentials: { FACTORY_API_KEY: fk-in-the-file-0042 }\n';
    const seen: string[][] = [];
    const { config } = await load(text, { OPENAI_API_KEY: 'sk-openai-from-env-4711' }, (secrets) => seen.push(secrets));
    expect(seen.flat()).toContain('fk-in-the-file-0042');
    expect(seen.flat()).not.toContain('sk-openai-from-env-4711');
    const codex = config.adapters.codex;
    expect(seen.flat()).toContain('sk-openai-from-env-4711');
    expect(codex.credentials.OPENAI_API_KEY).toBe('sk-openai-from-env-4711');
  });

  it('leave an invalid file described by the whole schema: a misspelt adapter name gets its suggestion', async () => {
    const error = await load('adapters:\n  codx: { enabled: true }\n', {}).catch((e: unknown) => e);
    expect(isOneWorksError(error, 'config_invalid')).toBe(true);
    expect((error as Error).message).toBe('one-works.yaml:2:3: adapters.codx: unknown key; did you mean "codex"?');
  });

  it('may be replaced like any key', async () => {
    const { config } = await load('sandbox: none\n', {});
    const adapters = config.adapters as Record<string, unknown>;
    adapters.gemini = { enabled: true };
    expect(adapters.gemini).toEqual({ enabled: true });
    expect({ ...adapters }.gemini).toEqual({ enabled: true });
  });
});
