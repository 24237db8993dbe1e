import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { collectSecrets, createConfigSchema, maskSecrets, parseConfigText, renderEffectiveConfig } from '../../../core/config/index.js';

const schema = createConfigSchema({ droid: DroidConfigSchema });

const TEXT = `
adapters:
  droid:
    customModels:
      - model: a
        baseUrl: http://127.0.0.1:8000/v1
        apiKey: \${KEY_A}
        provider: openai
        extraHeaders:
          X-Auth: header-secret-1
          X-Other: header-secret-2
      - model: b
        baseUrl: http://127.0.0.1:8001/v1
        apiKey: key-b-secret
        provider: anthropic
    credentials:
      FACTORY_TOKEN: token-secret
    env:
      PLAIN_VALUE: visible
`;

const config = parseConfigText(TEXT, { schema, env: { KEY_A: 'key-a-secret' }, file: 'one-works.yaml' });

describe('maskSecrets', () => {
  it('replaces every secret with *** and leaves everything else as it was', () => {
    const masked = maskSecrets(schema, config);
    const droid = masked.adapters.droid;
    expect(droid.customModels.map((m) => m.apiKey)).toEqual(['***', '***']);
    expect(droid.customModels[0]?.extraHeaders).toEqual({ 'X-Auth': '***', 'X-Other': '***' });
    expect(droid.credentials).toEqual({ FACTORY_TOKEN: '***' });
    expect(droid.env).toEqual({ PLAIN_VALUE: 'visible' });
    expect(droid.customModels[1]?.baseUrl).toBe('http://127.0.0.1:8001/v1');
    expect({ ...masked, adapters: undefined }).toEqual({ ...config, adapters: undefined });
  });

  it('does not modify its input', () => {
    maskSecrets(schema, config);
    expect(config.adapters.droid.customModels[0]?.apiKey).toBe('key-a-secret');
  });

  it('leaves unset secrets unset', () => {
    const masked = maskSecrets(schema, parseConfigText('', { schema, env: {}, file: 'x' }));
    expect(masked.adapters.droid.credentials).toEqual({});
    expect('FACTORY_API_KEY' in masked.adapters.droid.credentials).toBe(false);
  });

  it('finds secrets marked in any schema, through optional and default wrappers', () => {
    const own = z.object({
      list: z.array(z.object({ token: z.string().meta({ secret: true }).optional() })).default([]),
      map: z.record(z.string(), z.string().meta({ secret: true })),
      name: z.string(),
    });
    const value = own.parse({ list: [{ token: 'aaaa' }, {}], map: { k: 'bbbb' }, name: 'n' });
    expect(maskSecrets(own, value)).toEqual({ list: [{ token: '***' }, {}], map: { k: '***' }, name: 'n' });
    expect(collectSecrets(own, value)).toEqual(['aaaa', 'bbbb']);
  });
});

describe('collectSecrets', () => {
  it('returns every secret value once, for the redactor', () => {
    expect(collectSecrets(schema, config).sort()).toEqual(
      ['header-secret-1', 'header-secret-2', 'key-a-secret', 'key-b-secret', 'token-secret'].sort(),
    );
  });
});

describe('renderEffectiveConfig', () => {
  it('renders YAML with defaults applied and no secret in it', () => {
    const text = renderEffectiveConfig(schema, config);
    for (const secret of collectSecrets(schema, config)) expect(text).not.toContain(secret);
    const reparsed = parse(text) as typeof config;
    expect(reparsed.adapters.droid.customModels[1]?.apiKey).toBe('***');
    expect(reparsed.adapters.droid.cli.range).toBe('>=0.225.0 <0.226.0');
    expect(reparsed.orchestrator.maxConcurrentRuns).toBe(4);
    expect(reparsed.adapters.droid.env).toEqual({ PLAIN_VALUE: 'visible' });
  });
});
