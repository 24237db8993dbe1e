import { describe, expect, it } from 'vitest';
import { DroidConfigSchema } from '../../../adapters/droid/config.js';
import { CONFIG_SCHEMA_ID, configJsonSchema, createConfigSchema } from '../../../core/config/index.js';

type JsonSchema = { properties?: Record<string, JsonSchema>; required?: string[]; items?: JsonSchema; [key: string]: unknown };

const json = configJsonSchema(createConfigSchema({ droid: DroidConfigSchema })) as JsonSchema;
const droid = json.properties?.adapters?.properties?.droid as JsonSchema;

describe('configJsonSchema', () => {
  it('carries $schema, $id and title', () => {
    expect(json.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(json.$id).toBe(CONFIG_SCHEMA_ID);
    expect(json.title).toBe('one-works.yaml');
  });

  it('has the top-level keys, none required, unknown keys forbidden', () => {
    expect(Object.keys(json.properties ?? {})).toEqual(['state', 'cache', 'workspaces', 'orchestrator', 'sandbox', 'defaults', 'adapters']);
    expect(json.required ?? []).toEqual([]);
    expect(json.additionalProperties).toBe(false);
  });

  it('has the droid keys with their defaults and enums', () => {
    expect(Object.keys(droid.properties ?? {})).toEqual([
      'enabled',
      'cli',
      'model',
      'effort',
      'autonomy',
      'customModels',
      'configContent',
      'env',
      'credentials',
      'startupTimeoutMs',
      'requestTimeoutMs',
      'drainFallbackMs',
      'interruptGraceMs',
      'fallback',
      'systemPrompt',
      'rules',
      'skills',
      'disableBuiltinSkills',
      'mcpServers',
      'hooks',
      'plugins',
      'policy',
    ]);
    expect(droid.required ?? []).toEqual([]);
    expect(droid.properties?.effort).toMatchObject({ enum: ['low', 'medium', 'high', 'xhigh', 'max'], default: 'high' });
    expect(Object.keys(droid.properties?.cli?.properties ?? {})).toEqual(['source', 'version', 'path', 'range']);
    expect(droid.properties?.cli?.properties?.version).toMatchObject({ type: 'string', default: '0.225.2' });
  });

  it('marks secrets writeOnly and requires what a custom model needs', () => {
    const model = droid.properties?.customModels?.items as JsonSchema;
    expect(model.required?.sort()).toEqual(['apiKey', 'baseUrl', 'model', 'provider']);
    expect(model.properties?.apiKey).toMatchObject({ type: 'string', writeOnly: true });
    expect(model.properties?.apiKey).not.toHaveProperty('secret');
    expect(droid.properties?.credentials?.properties?.FACTORY_API_KEY).toMatchObject({ writeOnly: true });
    expect(droid.properties?.credentials?.properties?.FACTORY_API_KEY).not.toHaveProperty('env');
  });
});
