import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CONFIG_SCHEMA, createContext } from '../../cli/context.js';
import { collectSecrets } from '../../core/config/index.js';

// `adapters.process.harnesses.<name>` becomes the adapter `process:<name>`: the CLI context
// resolves it, lists it among the enabled adapters and hands out the harness block (with the
// process block's policy) as its config.

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await rm(root, { recursive: true, force: true });
});

async function context(yaml: string) {
  const root = await mkdtemp(join(tmpdir(), 'ow-harness-ctx-'));
  roots.push(root);
  const config = join(root, 'one-works.yaml');
  await writeFile(config, yaml);
  return createContext({ config }, { PATH: '/usr/bin:/bin', HOME: root, XDG_STATE_HOME: join(root, 'state'), RUNNER_KEY: 'sk-harness-9' });
}

const YAML = [
  'adapters:',
  '  process:',
  '    policy: { deny: [rm] }',
  '    harnesses:',
  '      mine:',
  '        command: /usr/bin/env',
  '        args: [python3, /abs/runner.py]',
  '        provider: { baseUrl: "http://127.0.0.1:8000/v1", apiKey: "${RUNNER_KEY}" }',
  '',
].join('\n');

describe('process harnesses in the CLI context', () => {
  it('resolves process:<name> to an adapter of that name whose config is the harness block plus the policy', async () => {
    const ctx = await context(YAML);
    expect(ctx.enabledAdapters()).toEqual(['droid', 'process:mine']);
    expect(ctx.adapter('process:mine').name).toBe('process:mine');
    expect(ctx.adapter('process:mine')).toBe(ctx.adapter('process:mine'));
    expect(ctx.adapterConfig('process:mine')).toMatchObject({
      command: '/usr/bin/env',
      args: ['python3', '/abs/runner.py'],
      tools: ['workspace'],
      autonomy: 'low',
      openTimeoutMs: 30_000,
      policy: { deny: ['rm'] },
    });
    // The provider key is a config secret: registered for redaction before anything starts.
    expect(collectSecrets(CONFIG_SCHEMA, ctx.config)).toContain('sk-harness-9');
  });

  it('an unknown harness is a usage error naming the declared ones', async () => {
    const ctx = await context(YAML);
    expect(() => ctx.adapter('process:other')).toThrow(/unknown harness "other".*declared: mine/);
    expect(() => ctx.adapter('nope')).toThrow(/known adapters: droid, claude-code, codex, droid-acp, gemini, process:mine/);
  });

  it('prepare finds the command, and refuses one that is not executable', async () => {
    const ctx = await context(YAML);
    const adapter = ctx.adapter('process:mine');
    const prepare = (config: unknown) => adapter.prepare(config, { services: ctx.services, cacheDir: '/nonexistent', lock: new Map() });
    await expect(prepare(ctx.adapterConfig('process:mine'))).resolves.toMatchObject({ binaryPath: '/usr/bin/env', source: 'path' });
    await expect(prepare({ ...(ctx.adapterConfig('process:mine') as object), command: 'no-such-runner-xyz' })).rejects.toThrow(
      /no-such-runner-xyz.*not an executable file on PATH/,
    );
  });

  it('defaults.adapter may name a harness (process:<name>); an unknown adapter there is still refused', async () => {
    const ctx = await context(`defaults: { adapter: "process:mine" }\n${YAML}`);
    expect(ctx.defaultAdapter).toBe('process:mine');
    await expect(context(`defaults: { adapter: "no-such-agent" }\n${YAML}`)).rejects.toThrow(
      /expected one of droid, claude-code, codex, process, droid-acp, gemini, acp \(or <adapter>:<name>\)/,
    );
  });
});
