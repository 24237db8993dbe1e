import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { ADAPTER_CONFIG_SCHEMAS, ADAPTER_SECRET_PATHS, CONFIG_SCHEMA } from '../../../cli/context.js';
import { applyEnvDefaults, collectSecrets, createConfigSchema, loadConfig } from '../../../core/config/index.js';
import { adapterBlockSchema } from '../../../core/config/schema.js';
import { secretPaths, secretsAtPaths } from '../../../core/config/secret-paths.js';
import { isOneWorksError } from '../../../core/errors.js';
import { lazySchema } from '../../../core/lazy-schema.js';

// Issue 15: a command that reads no adapter block (`sessions`, `events`, …) leaves the blocks the
// file names unparsed until read, as those it leaves out; their secrets still reach the redactor at
// load, found at paths each adapter writes out next to its schema (cli/context.ts ADAPTER_SECRET_PATHS).

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ow-deferred-blocks-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const DEFERRED = { secretPaths: ADAPTER_SECRET_PATHS };

async function load(text: string, env: Record<string, string>, options: { defer: boolean; onSecrets?: (secrets: string[]) => void }) {
  await writeFile(join(dir, 'one-works.yaml'), text);
  return loadConfig({
    schema: CONFIG_SCHEMA,
    cwd: dir,
    env: { HOME: dir, ...env },
    ...(options.onSecrets ? { onSecrets: options.onSecrets } : {}),
    ...(options.defer ? { deferredBlocks: DEFERRED } : {}),
  });
}

// Secrets in every place the droid and claude-code blocks have one, from the file, from ${VAR}
// and from the credential defaults of the environment.
const SECRET_TEXT = `adapters:
  droid:
    model: custom:Local-0
    customModels:
      - model: local-model
        displayName: Local
        baseUrl: http://127.0.0.1:9/v1
        apiKey: sk-literal-4b1d9e
        provider: openai
        extraHeaders: { X-Team: hdr-value-77c0aa }
      - model: other-model
        baseUrl: http://127.0.0.1:9/v1
        apiKey: \${OTHER_MODEL_KEY}
        provider: openai
    credentials: { FACTORY_API_KEY: fk-file-credential-93d1 }
    mcpServers:
      tools: { type: stdio, command: /bin/true, env: { TOOL_TOKEN: mcp-env-secret-11aa } }
  claude-code:
    endpoint: { baseUrl: "http://127.0.0.1:9", apiKey: cc-endpoint-key-5e5e }
`;
const SECRET_ENV = { OTHER_MODEL_KEY: 'sk-interpolated-2f8e61', FACTORY_TOKEN: 'ft-env-token-5a0c3b', ANTHROPIC_API_KEY: 'ak-env-7c7c' };
const SECRETS = [
  'sk-literal-4b1d9e',
  'hdr-value-77c0aa',
  'sk-interpolated-2f8e61',
  'fk-file-credential-93d1',
  'ft-env-token-5a0c3b',
  'mcp-env-secret-11aa',
  'cc-endpoint-key-5e5e',
  'ak-env-7c7c',
];

describe('secret paths', () => {
  it('are written out by every adapter as its block schema has them', () => {
    const computed = Object.fromEntries(
      Object.entries(ADAPTER_CONFIG_SCHEMAS).map(([name, schema]) => [name, secretPaths(adapterBlockSchema(name, schema as z.ZodType))]),
    );
    // On a difference, the adapter's *_SECRET_PATHS (its config module) must say what the schema says.
    expect(ADAPTER_SECRET_PATHS).toEqual(computed);
  });

  it('find what collectSecrets finds over the parsed blocks', async () => {
    const { config } = await load(SECRET_TEXT, SECRET_ENV, { defer: false });
    const raw = { droid: undefined as unknown, 'claude-code': undefined as unknown };
    const text = SECRET_TEXT.replace('${OTHER_MODEL_KEY}', SECRET_ENV.OTHER_MODEL_KEY);
    Object.assign(raw, (parse(text) as { adapters: typeof raw }).adapters);
    const env = { HOME: dir, ...SECRET_ENV };
    for (const name of ['droid', 'claude-code'] as const) {
      const block = adapterBlockSchema(name, ADAPTER_CONFIG_SCHEMAS[name] as z.ZodType);
      const parsed = (config.adapters as Record<string, unknown>)[name];
      const expected = collectSecrets(block, applyEnvDefaults(block, parsed, env));
      expect(expected.length, name).toBeGreaterThan(1);
      expect(new Set(secretsAtPaths(ADAPTER_SECRET_PATHS[name]!, raw[name], env)), name).toEqual(new Set(expected));
    }
  });

  it('walk objects, records and arrays through wrappers, and a recursive schema once', () => {
    type Node = { token?: string; children?: Node[] };
    const node: z.ZodType<Node> = lazySchema(() =>
      z.strictObject({ token: z.string().meta({ secret: true }).optional(), children: z.array(node).optional() }),
    );
    const schema = z.strictObject({
      key: z.string().meta({ secret: true, env: 'THE_KEY' }).optional(),
      plain: z.string().default('x'),
      headers: z.record(z.string(), z.string().meta({ secret: true })).prefault({}),
      tree: node.optional(),
    });
    expect(secretPaths(schema)).toEqual([{ path: ['key'], env: 'THE_KEY' }, { path: ['headers', '*'] }, { path: ['tree', 'token'] }]);
    const paths = secretPaths(schema);
    expect(secretsAtPaths(paths, { headers: { a: 'h-1', b: '' }, tree: { token: 't-1' } }, { THE_KEY: 'k-env' }).sort()).toEqual([
      'h-1',
      'k-env',
      't-1',
    ]);
    expect(secretsAtPaths(paths, { key: 'k-file' }, { THE_KEY: 'k-env' })).toEqual(['k-file']);
  });
});

describe('adapter blocks parsed when first read (deferredBlocks)', () => {
  it('give the values a load that parsed them gives, and hand every secret over at load', async () => {
    const whole = await load(SECRET_TEXT, SECRET_ENV, { defer: false });
    const registered: string[] = [];
    const deferred = await load(SECRET_TEXT, SECRET_ENV, { defer: true, onSecrets: (secrets) => registered.push(...secrets) });
    // Before any block is read: every secret of the file and the environment is known.
    for (const secret of SECRETS) expect(registered).toContain(secret);
    expect(JSON.parse(JSON.stringify(deferred.config))).toEqual(JSON.parse(JSON.stringify(whole.config)));
  });

  it('leave a block the schema refuses to its first reader, with the message a parsing load gives', async () => {
    const text = 'state: { directory: /tmp/ow-state }\nadapters:\n  droid:\n    model: custom:X-0\n    bogus: 1\n';
    const refused = await load(text, {}, { defer: false }).catch((error: unknown) => error);
    expect(isOneWorksError(refused) && refused.code).toBe('config_invalid');
    const { config } = await load(text, {}, { defer: true });
    expect(config.state.directory).toBe('/tmp/ow-state');
    let read: unknown;
    try {
      read = (config.adapters as Record<string, unknown>).droid;
    } catch (error) {
      read = error;
    }
    expect(isOneWorksError(read) && read.code).toBe('config_invalid');
    expect((read as Error).message).toBe((refused as Error).message);
    expect((read as Error).message).toMatch(/one-works\.yaml:5:\d+: adapters\.droid/);
  });

  it('still refuse an adapter name the config does not know, and the config outside the blocks, at load', async () => {
    for (const text of ['adapters:\n  nope: {}\n', 'orchestrator: { keepWarmMs: -1 }\nadapters:\n  droid: {}\n']) {
      const error = await load(text, {}, { defer: true }).catch((caught: unknown) => caught);
      expect(isOneWorksError(error) && error.code, text).toBe('config_invalid');
    }
  });

  it('build no schema of a block until it is read', async () => {
    const built: string[] = [];
    const block = (name: string) =>
      lazySchema(() => {
        built.push(name);
        return z.strictObject({ apiKey: z.string().meta({ secret: true }).optional(), model: z.string().default(`${name}-model`) });
      });
    const schema = createConfigSchema({ alpha: block('alpha'), beta: block('beta') });
    await writeFile(join(dir, 'one-works.yaml'), 'adapters:\n  alpha: { apiKey: alpha-key-1234 }\n');
    const registered: string[] = [];
    const { config } = await loadConfig({
      schema,
      cwd: dir,
      env: { HOME: dir },
      onSecrets: (secrets) => registered.push(...secrets),
      deferredBlocks: { secretPaths: { alpha: [{ path: ['apiKey'] }], beta: [{ path: ['apiKey'] }] } },
    });
    expect(built).toEqual([]);
    expect(registered).toEqual(['alpha-key-1234']);
    expect(config.adapters.alpha).toEqual({ apiKey: 'alpha-key-1234', model: 'alpha-model' });
    expect(built).toEqual(['alpha']);
  });
});
