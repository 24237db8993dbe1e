import { describe, expect, it } from 'vitest';
import { customModelId, DroidConfigSchema } from '../../../adapters/droid/config.js';
import { defaultCliRange as defaultRange } from '../../../core/adapter.js';
import { isOneWorksError } from '../../../core/errors.js';

const model = (name: Partial<{ model: string; displayName: string; id: string }>) => ({ model: 'm', ...name });

describe('customModelId', () => {
  it('counts earlier entries with the same name, not the array index', () => {
    const models = [model({ displayName: 'A' }), model({ displayName: 'B' }), model({ displayName: 'A' })];
    expect(models.map((_, i) => customModelId(models, i))).toEqual(['custom:A-0', 'custom:B-0', 'custom:A-1']);
  });

  it('trims the name, turns whitespace runs into "-" and falls back to the model name', () => {
    const models = [
      model({ displayName: 'My  Model' }),
      model({ displayName: 'Other' }),
      model({ displayName: ' My Model ' }),
      { model: 'm-d' },
    ];
    expect(models.map((_, i) => customModelId(models, i))).toEqual([
      'custom:My-Model-0',
      'custom:Other-0',
      'custom:My-Model-1',
      'custom:m-d-0',
    ]);
  });

  it('uses an explicit id as is', () => {
    const models = [model({ displayName: 'A', id: 'custom:pinned' }), model({ displayName: 'A' })];
    expect(customModelId(models, 0)).toBe('custom:pinned');
    expect(customModelId(models, 1)).toBe('custom:A-1');
  });

  it('throws on an index outside the list', () => {
    expect(() => customModelId([], 0)).toThrow(RangeError);
  });
});

describe('defaultRange', () => {
  it("is the pin's minor line", () => {
    expect(defaultRange('0.225.2')).toBe('>=0.225.0 <0.226.0');
    expect(defaultRange('1.9.0')).toBe('>=1.9.0 <1.10.0');
  });

  it('rejects a pin that is not a version', () => {
    let caught: unknown;
    try {
      defaultRange('^0.225');
    } catch (error) {
      caught = error;
    }
    expect(isOneWorksError(caught, 'config_invalid')).toBe(true);
  });
});

describe('DroidConfigSchema', () => {
  it('derives the range from an explicit pin and keeps an explicit range', () => {
    expect(DroidConfigSchema.parse({ cli: { version: '0.215.0' } }).cli.range).toBe('>=0.215.0 <0.216.0');
    expect(DroidConfigSchema.parse({ cli: { range: '>=0.225.0 <0.230.0' } }).cli.range).toBe('>=0.225.0 <0.230.0');
  });

  it('accepts source path with an absolute path, and a system range without the pin', () => {
    const parsed = DroidConfigSchema.parse({ cli: { source: 'path', path: '/opt/droid' } });
    expect(parsed.cli).toEqual({ source: 'path', path: '/opt/droid', version: '0.225.2', range: '>=0.225.0 <0.226.0' });
    expect(DroidConfigSchema.parse({ cli: { source: 'system', range: '>=0.226.0' } }).cli.range).toBe('>=0.226.0');
  });

  it('rejects a relative cli.path', () => {
    const result = DroidConfigSchema.safeParse({ cli: { source: 'path', path: 'bin/droid' } });
    expect(result.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['cli.path', 'expected an absolute path, got "bin/droid"'],
    ]);
  });

  it('accepts every documented effort and rejects others', () => {
    for (const effort of ['low', 'medium', 'high', 'xhigh', 'max']) expect(DroidConfigSchema.parse({ effort }).effort).toBe(effort);
    expect(DroidConfigSchema.safeParse({ effort: 'ultra' }).success).toBe(false);
  });

  it('rejects two custom models that end up with the same id', () => {
    const entry = { model: 'x', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'k', provider: 'openai' };
    const result = DroidConfigSchema.safeParse({
      customModels: [
        { ...entry, displayName: 'A', id: 'custom:A-1' },
        { ...entry, displayName: 'A' },
      ],
    });
    expect(result.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['customModels.1', 'duplicate model id "custom:A-1" (also customModels[0])'],
    ]);
  });

  it('falls back to one-shot mode by default, accepts none, and rejects any other fallback', () => {
    expect(DroidConfigSchema.parse({}).fallback).toBe('oneshot');
    expect(DroidConfigSchema.parse({ fallback: 'none' }).fallback).toBe('none');
    const result = DroidConfigSchema.safeParse({ fallback: 'exec' });
    expect(result.error?.issues.map((i) => i.path.join('.'))).toEqual(['fallback']);
  });

  it('rejects env names that are not variable names and non-string env values', () => {
    expect(DroidConfigSchema.safeParse({ env: { 'NOT A NAME': 'x' } }).success).toBe(false);
    expect(DroidConfigSchema.safeParse({ env: { FACTORY_AIRGAP_ENABLED: true } }).success).toBe(false);
    expect(DroidConfigSchema.parse({ env: { FACTORY_AIRGAP_ENABLED: 'true' } }).env).toEqual({ FACTORY_AIRGAP_ENABLED: 'true' });
  });
});
