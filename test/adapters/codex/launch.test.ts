import { describe, expect, it } from 'vitest';
import type { ResolvedCli } from '../../../core/adapter.js';
import { CodexConfigSchema } from '../../../adapters/codex/config.js';
import { CODEX_BYOK_KEY_ENV, codexConfigToml, codexSeedFiles, describeCodexLaunch } from '../../../adapters/codex/launch.js';

const cli: ResolvedCli = {
  source: 'path',
  binaryPath: '/opt/codex/codex',
  version: '0.171.0',
  range: '>=0.171.0 <0.172.0',
  expected: undefined,
};
const KEY = 'sk-launch-test-91b2';

describe('codex launch', () => {
  it('puts CODEX_HOME and a TMPDIR beside it (not above it) in the session HOME, and the key only in the environment', () => {
    const config = CodexConfigSchema.parse({ enabled: true, model: 'm', endpoint: { baseUrl: 'http://127.0.0.1:8000/v1/', apiKey: KEY } });
    const spec = describeCodexLaunch(config, cli, { cwd: '/ws', home: '/state/s/home', hostEnv: { PATH: '/usr/bin', HTTPS_PROXY: 'x' } });
    expect(spec.command).toBe('/opt/codex/codex');
    expect(spec.args).toEqual(['app-server']);
    expect(spec.env).toMatchObject({ CODEX_HOME: '/state/s/home/.codex', TMPDIR: '/state/s/home/.codex-tmp', [CODEX_BYOK_KEY_ENV]: KEY });
    expect(spec.env.HTTPS_PROXY).toBeUndefined();
    expect(spec.secrets).toEqual([KEY]);
    const seeds = codexSeedFiles(config);
    expect(seeds.map((s) => s.path)).toEqual(['.codex/config.toml', '.codex-tmp/.keep']);
    expect(seeds.map((s) => s.content).join('')).not.toContain(KEY);
  });

  it('writes a config.toml with the outside lookups off and the endpoint as a Responses provider', () => {
    const config = CodexConfigSchema.parse({ model: 'm', effort: 'low', endpoint: { baseUrl: 'http://127.0.0.1:8000/v1/', apiKey: KEY } });
    const toml = codexConfigToml(config);
    expect(toml).toContain('check_for_update_on_startup = false');
    expect(toml).toContain('[features]\nplugins = false');
    expect(toml).toContain('[analytics]\nenabled = false');
    expect(toml).toContain('[feedback]\nenabled = false');
    expect(toml).toContain('[otel]\nexporter = "none"');
    expect(toml).toContain('model = "m"\nmodel_reasoning_effort = "low"\nmodel_provider = "one-works"');
    expect(toml).toContain('base_url = "http://127.0.0.1:8000/v1"\nenv_key = "ONE_WORKS_CODEX_API_KEY"\nwire_api = "responses"');
    expect(toml).not.toContain(KEY);
    expect(toml).not.toContain('[projects.');
    // The workspace (and every folder above it) is untrusted: its own .codex rules and config are not read.
    const scoped = codexConfigToml(config, '/work/ws');
    for (const dir of ['/work/ws', '/work', '/']) expect(scoped).toContain(`[projects."${dir}"]\ntrust_level = "untrusted"`);
    const plain = codexConfigToml(CodexConfigSchema.parse({}));
    expect(plain).not.toContain('model_provider');
    expect(plain).not.toContain('model =');
  });

  it('passes configured credentials and passEnv names only when set', () => {
    const config = CodexConfigSchema.parse({ credentials: { OPENAI_API_KEY: 'sk-o' }, passEnv: ['HTTPS_PROXY', 'NO_PROXY'] });
    const spec = describeCodexLaunch(config, cli, { cwd: '/ws', home: '/h', hostEnv: { HTTPS_PROXY: 'http://proxy' } });
    expect(spec.env).toMatchObject({ OPENAI_API_KEY: 'sk-o', HTTPS_PROXY: 'http://proxy' });
    expect(spec.env.NO_PROXY).toBeUndefined();
    expect(spec.env.CODEX_API_KEY).toBeUndefined();
    expect(spec.secrets).toEqual(['sk-o']);
  });
});
