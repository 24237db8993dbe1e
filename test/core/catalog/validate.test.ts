import { describe, expect, it } from 'vitest';
import { validateModelAndEffort, type CatalogModel } from '../../../core/catalog/index.js';
import { OneWorksError } from '../../../core/errors.js';

const model = (id: string, over: Partial<CatalogModel> = {}): CatalogModel => ({
  id,
  displayName: id,
  custom: false,
  deprecated: false,
  disabled: false,
  efforts: ['low', 'medium', 'high'],
  defaultEffort: 'medium',
  ...over,
});

const MODELS: CatalogModel[] = [
  model('gpt-5.4'),
  model('gpt-5.4-mini'),
  model('sonnet-5', { efforts: ['off', 'low', 'high', 'max'], defaultEffort: 'high' }),
  model('old-one', { deprecated: true }),
  model('locked', { disabled: true, disabledReason: 'requires a Pro plan' }),
  model('custom:Local-0', { custom: true, efforts: ['none'], defaultEffort: 'none' }),
  model('mystery', { efforts: [] }),
];

function caught(fn: () => unknown): OneWorksError {
  try {
    fn();
  } catch (error) {
    if (error instanceof OneWorksError) return error;
    throw error;
  }
  throw new Error('expected a OneWorksError');
}

describe('validateModelAndEffort', () => {
  it('accepts a listed model with a supported effort', () => {
    const check = validateModelAndEffort(MODELS, { model: 'sonnet-5', effort: 'max' });
    expect(check).toEqual({ model: MODELS[2], effort: 'checked', notes: [] });
  });

  it('skips every check for inherit or no model, even with an odd effort', () => {
    expect(validateModelAndEffort(MODELS, { model: 'inherit', effort: 'ultra' })).toEqual({
      model: undefined,
      effort: 'unchecked',
      notes: [],
    });
    expect(validateModelAndEffort([], { model: undefined, effort: 'ultra' })).toEqual({ model: undefined, effort: 'unchecked', notes: [] });
  });

  it('rejects an unknown model with model_unavailable, suggesting close ids and `one-works models`', () => {
    const error = caught(() => validateModelAndEffort(MODELS, { model: 'gpt-5.4-mimi' }));
    expect(error.code).toBe('model_unavailable');
    expect(error.message).toMatch(/^model gpt-5.4-mimi is not available; available include gpt-5.4-mini, gpt-5.4, /);
    expect(error.message).toContain('`one-works models` shows all');
    // Deprecated and disabled models are not suggested.
    expect(error.data?.suggestions).toEqual(['gpt-5.4-mini', 'gpt-5.4', 'sonnet-5', 'mystery', 'custom:Local-0']);
  });

  it('rejects a disabled model with its reason', () => {
    const error = caught(() => validateModelAndEffort(MODELS, { model: 'locked', effort: 'low' }));
    expect(error.code).toBe('model_unavailable');
    expect(error.message).toMatch(/^model locked is disabled \(requires a Pro plan\); available include /);
  });

  it('says so when nothing is available', () => {
    const error = caught(() => validateModelAndEffort([], { model: 'x' }));
    expect(error.message).toBe('model x is not available; no model is available; `one-works models` shows all');
  });

  it('rejects an unsupported effort with effort_unsupported, listing the supported ones', () => {
    const error = caught(() => validateModelAndEffort(MODELS, { model: 'gpt-5.4', effort: 'max' }));
    expect(error.code).toBe('effort_unsupported');
    expect(error.message).toBe('model gpt-5.4 does not support reasoning effort "max"; supported: low, medium, high (default medium)');
    expect(error.data).toEqual({ model: 'gpt-5.4', effort: 'max', supported: ['low', 'medium', 'high'] });
  });

  it('accepts any effort for a model whose only effort is none, reported as not applicable', () => {
    const check = validateModelAndEffort(MODELS, { model: 'custom:Local-0', effort: 'high' });
    expect(check.effort).toBe('not_applicable');
    expect(check.notes).toEqual(['model custom:Local-0 has no reasoning effort levels; effort "high" does not apply and is ignored']);
    expect(validateModelAndEffort(MODELS, { model: 'custom:Local-0', effort: 'none' }).effort).toBe('checked');
  });

  it('leaves the effort unchecked when the model lists none or no effort is asked', () => {
    expect(validateModelAndEffort(MODELS, { model: 'mystery', effort: 'turbo' }).effort).toBe('unchecked');
    expect(validateModelAndEffort(MODELS, { model: 'gpt-5.4' }).effort).toBe('unchecked');
  });

  it('accepts a deprecated model with a note', () => {
    const check = validateModelAndEffort(MODELS, { model: 'old-one', effort: 'low' });
    expect(check.effort).toBe('checked');
    expect(check.notes).toEqual(['model old-one is deprecated; `one-works models` lists current ones']);
  });
});
