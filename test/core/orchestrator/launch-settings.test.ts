import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../../../core/catalog/index.js';
import { needsCatalog, resolveCreateSettings, resolveSendSettings } from '../../../core/orchestrator/launch-settings.js';
import type { AdapterDefaults } from '../../../core/orchestrator/index.js';

const model = (id: string, efforts: string[], defaultEffort?: string, extra: Partial<CatalogModel> = {}): CatalogModel => ({
  id,
  displayName: id,
  custom: false,
  deprecated: false,
  disabled: false,
  efforts,
  ...(defaultEffort === undefined ? {} : { defaultEffort }),
  ...extra,
});

const CATALOG: CatalogModel[] = [
  model('big', ['low', 'medium', 'high'], 'medium'),
  model('small', ['off', 'low', 'high'], 'low'),
  model('byok', ['none'], undefined, { custom: true }),
  model('quiet', []),
  model('picky', ['low', 'high']),
  model('gone', ['low'], 'low', { disabled: true, disabledReason: 'no entitlement' }),
];

const DEFAULTS: AdapterDefaults = { model: 'big', effort: 'high', autonomy: 'low' };

describe('launch settings: a new session', () => {
  it('takes the adapter defaults, the configured effort going with the configured model', () => {
    expect(resolveCreateSettings({}, DEFAULTS, CATALOG)).toEqual({ model: 'big', effort: 'high', autonomy: 'low' });
  });

  it('keeps what the request names, validated against the catalog', () => {
    expect(resolveCreateSettings({ model: 'small', effort: 'off', autonomy: 'off' }, DEFAULTS, CATALOG)).toEqual({
      model: 'small',
      effort: 'off',
      autonomy: 'off',
    });
  });

  it("gives another model the catalog's default effort, not the configured one", () => {
    expect(resolveCreateSettings({ model: 'small' }, DEFAULTS, CATALOG)).toEqual({ model: 'small', effort: 'low', autonomy: 'low' });
  });

  it('drops an effort a model without effort levels would ignore, configured or asked', () => {
    const byokDefault: AdapterDefaults = { model: 'byok', effort: 'high', autonomy: 'low' };
    expect(resolveCreateSettings({}, byokDefault, CATALOG)).toEqual({ model: 'byok', autonomy: 'low' });
    expect(resolveCreateSettings({ model: 'byok', effort: 'low' }, DEFAULTS, CATALOG)).toEqual({ model: 'byok', autonomy: 'low' });
    expect(resolveSendSettings({ effort: 'high' }, { model: 'byok', autonomy: 'off' }, CATALOG)).toEqual({
      model: 'byok',
      autonomy: 'off',
    });
  });

  it('gives a model without effort levels no effort', () => {
    expect(resolveCreateSettings({ model: 'byok' }, DEFAULTS, CATALOG)).toEqual({ model: 'byok', autonomy: 'low' });
  });

  it('asks for an effort when the catalog does not say which a non-default model supports (efforts [])', () => {
    expect(() => resolveCreateSettings({ model: 'quiet' }, DEFAULTS, CATALOG)).toThrow(
      expect.objectContaining({ code: 'effort_required', message: expect.stringContaining('does not say') }),
    );
    expect(resolveCreateSettings({ model: 'quiet', effort: 'medium' }, DEFAULTS, CATALOG)).toEqual({
      model: 'quiet',
      effort: 'medium',
      autonomy: 'low',
    });
    // As the configured default model, it takes the configured effort (none configured: none).
    expect(resolveCreateSettings({}, { model: 'quiet', effort: 'high', autonomy: 'low' }, CATALOG)).toEqual({
      model: 'quiet',
      effort: 'high',
      autonomy: 'low',
    });
    expect(resolveCreateSettings({}, { model: 'quiet', autonomy: 'low' }, CATALOG)).toEqual({ model: 'quiet', autonomy: 'low' });
  });

  it('refuses an unknown or disabled model and an unsupported effort', () => {
    expect(() => resolveCreateSettings({ model: 'nope' }, DEFAULTS, CATALOG)).toThrow(
      expect.objectContaining({ code: 'model_unavailable' }),
    );
    expect(() => resolveCreateSettings({ model: 'gone' }, DEFAULTS, CATALOG)).toThrow(
      expect.objectContaining({ code: 'model_unavailable' }),
    );
    expect(() => resolveCreateSettings({ model: 'small', effort: 'medium' }, DEFAULTS, CATALOG)).toThrow(
      expect.objectContaining({ code: 'effort_unsupported' }),
    );
  });

  it('asks for an effort when a non-default model lists efforts but no default', () => {
    expect(() => resolveCreateSettings({ model: 'picky' }, DEFAULTS, CATALOG)).toThrow(
      expect.objectContaining({ code: 'effort_required', message: expect.stringContaining('low, high') }),
    );
    expect(resolveCreateSettings({ model: 'picky', effort: 'high' }, DEFAULTS, CATALOG)).toEqual({
      model: 'picky',
      effort: 'high',
      autonomy: 'low',
    });
  });

  it('never checks inherit or an absent model, and needs no catalog for them', () => {
    expect(needsCatalog(undefined)).toBe(false);
    expect(needsCatalog('inherit')).toBe(false);
    expect(needsCatalog('big')).toBe(true);
    expect(resolveCreateSettings({ model: 'inherit', effort: 'whatever' }, DEFAULTS, undefined)).toEqual({
      model: 'inherit',
      effort: 'whatever',
      autonomy: 'low',
    });
    expect(resolveCreateSettings({}, { autonomy: 'medium' }, undefined)).toEqual({ autonomy: 'medium' });
  });

  it('checks nothing when the adapter has no catalog', () => {
    expect(resolveCreateSettings({ model: 'anything' }, DEFAULTS, undefined)).toEqual({ model: 'anything', autonomy: 'low' });
  });
});

describe('launch settings: a follow-up', () => {
  const previous = { model: 'big', effort: 'high', autonomy: 'off' as const };

  it('inherits every setting of the last accepted turn, a read-only autonomy included', () => {
    expect(resolveSendSettings({}, previous, CATALOG)).toEqual(previous);
  });

  it('keeps the effort when only the autonomy changes', () => {
    expect(resolveSendSettings({ autonomy: 'medium' }, previous, CATALOG)).toEqual({ ...previous, autonomy: 'medium' });
  });

  it("does not carry the old effort to a new model: the new model's catalog default", () => {
    expect(resolveSendSettings({ model: 'small' }, previous, CATALOG)).toEqual({ model: 'small', effort: 'low', autonomy: 'off' });
  });

  it('leaves the effort undefined for a new model without effort levels', () => {
    expect(resolveSendSettings({ model: 'byok' }, previous, CATALOG)).toEqual({ model: 'byok', autonomy: 'off' });
  });

  it('rejects a new model with efforts but no default unless an effort is given', () => {
    expect(() => resolveSendSettings({ model: 'picky' }, previous, CATALOG)).toThrow(expect.objectContaining({ code: 'effort_required' }));
    expect(resolveSendSettings({ model: 'picky', effort: 'low' }, previous, CATALOG)).toEqual({
      model: 'picky',
      effort: 'low',
      autonomy: 'off',
    });
  });

  it('rejects a new model whose efforts the catalog does not know (efforts []) unless an effort is given; keeps it when the model stays', () => {
    expect(() => resolveSendSettings({ model: 'quiet' }, previous, CATALOG)).toThrow(expect.objectContaining({ code: 'effort_required' }));
    expect(resolveSendSettings({ model: 'quiet', effort: 'low' }, previous, CATALOG)).toEqual({
      model: 'quiet',
      effort: 'low',
      autonomy: 'off',
    });
    expect(resolveSendSettings({}, { model: 'quiet', effort: 'low', autonomy: 'off' }, CATALOG)).toEqual({
      model: 'quiet',
      effort: 'low',
      autonomy: 'off',
    });
  });

  it('validates an explicit effort against the inherited model', () => {
    expect(() => resolveSendSettings({ effort: 'off' }, previous, CATALOG)).toThrow(
      expect.objectContaining({ code: 'effort_unsupported' }),
    );
  });

  it('asking for the same model again is no model change', () => {
    expect(resolveSendSettings({ model: 'big' }, previous, CATALOG)).toEqual(previous);
  });
});
