// The modules themselves, not core/catalog/index.js (the catalog loader spawns agents: execa).
import type { CatalogModel } from '../catalog/index.js';
import { INHERIT_MODEL, validateModelAndEffort } from '../catalog/validate.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { AdapterDefaults } from './orchestrator-deps.js';
import type { EffectiveSettings, TurnSettings } from './types.js';

/**
 * Launch defaults: the settings a turn runs with, resolved once when it is accepted. Pure; the
 * caller fetches the catalog (only when {@link needsCatalog} says so) and records the result.
 *
 * - create: model = request ?? adapter default; effort = request ?? (the default model ? the
 *   configured default effort : the catalog's default effort of that model); autonomy =
 *   request ?? adapter default.
 * - send: every setting the request leaves out comes from the session's last accepted turn
 *   (never from the host's defaults), except that a changed model never carries the old
 *   model's effort: the new model's catalog default is used instead.
 * - a model with no effort levels (efforts `['none']`) gets no effort: the CLI ignores one, so
 *   even an asked effort is not effective.
 * - a model whose effort must come from the catalog (a model change, or a create with a
 *   non-default model, with no effort asked) but whose entry names no default effort:
 *   `effort_required`. That includes efforts `[]`, which means the CLI does not say (unknown),
 *   not that the model has no levels.
 * - a checked model and effort must pass `validateModelAndEffort` (`model_unavailable`,
 *   `effort_unsupported`); model undefined or `inherit` is never checked.
 */

/** True when resolving these settings needs the catalog: a model that will be checked. */
export function needsCatalog(model: string | undefined): boolean {
  return model !== undefined && model !== INHERIT_MODEL;
}

/** The model a request will run: the asked one, else the base's (defaults or the last turn). */
export function chosenModel(request: TurnSettings, base: { model?: string | undefined }): string | undefined {
  return request.model ?? base.model;
}

/**
 * Settings of a new session's first turn. `models` is the adapter's catalog (undefined when
 * the adapter has none, or the model is not checked).
 */
export function resolveCreateSettings(
  request: TurnSettings,
  defaults: AdapterDefaults,
  models: readonly CatalogModel[] | undefined,
): EffectiveSettings {
  const model = chosenModel(request, defaults);
  const effort = request.effort ?? (model === defaults.model ? defaults.effort : catalogDefaultEffort(model, models));
  return checked({ model, effort, autonomy: request.autonomy ?? defaults.autonomy }, models);
}

/**
 * Settings of a follow-up turn, from the session's last accepted turn `previous` (its queued,
 * running or ended run, or the pending settings of a session with no run yet).
 */
export function resolveSendSettings(
  request: TurnSettings,
  previous: EffectiveSettings,
  models: readonly CatalogModel[] | undefined,
): EffectiveSettings {
  const model = chosenModel(request, previous);
  const modelChanged = model !== previous.model;
  const effort = request.effort ?? (modelChanged ? catalogDefaultEffort(model, models) : previous.effort);
  return checked({ model, effort, autonomy: request.autonomy ?? previous.autonomy }, models);
}

/**
 * What a person should know about a turn's settings, one sentence each: a deprecated model, or
 * an asked effort the model ignores. None without a catalog. Call after the settings resolved.
 * `defaults` (a new session's): an effort the user configured explicitly for the default model
 * counts as asked, so it is not dropped silently; a schema default is never noted.
 */
export function launchNotes(
  asked: TurnSettings,
  settings: EffectiveSettings,
  models: readonly CatalogModel[] | undefined,
  defaults?: AdapterDefaults,
): string[] {
  if (models === undefined) return [];
  const configured = defaults?.effortExplicit === true && settings.model === defaults.model ? defaults.effort : undefined;
  return validateModelAndEffort(models, { model: settings.model, effort: asked.effort ?? configured }).notes;
}

// The effort the catalog gives a model run without one; undefined for a model with no effort
// levels (['none']) or one the catalog cannot be asked about. A model that names no default
// (its efforts listed, or unknown: []) leaves nothing safe to pick: `effort_required`.
function catalogDefaultEffort(model: string | undefined, models: readonly CatalogModel[] | undefined): string | undefined {
  if (!needsCatalog(model) || models === undefined) return undefined;
  const entry = models.find((m) => m.id === model);
  if (!entry || entry.disabled || hasNoEffortLevels(entry)) return undefined;
  if (entry.defaultEffort !== undefined) return entry.defaultEffort;
  const supported = entry.efforts.length === 0 ? 'the catalog does not say which it supports' : `supported: ${entry.efforts.join(', ')}`;
  throw new OneWorksError(
    ERROR_CODES.EFFORT_REQUIRED,
    `model ${entry.id} has no default reasoning effort and the previous one does not carry over to a new model; give an effort explicitly (${supported})`,
    { data: { model: entry.id, supported: entry.efforts } },
  );
}

function hasNoEffortLevels(model: CatalogModel): boolean {
  return model.efforts.length === 1 && model.efforts[0] === 'none';
}

// Validates model and effort against the catalog (when there is one) and drops undefined keys.
// An effort for a model without effort levels has no effect (the CLI resets it), so it is not
// part of the effective settings.
function checked(settings: EffectiveSettings, models: readonly CatalogModel[] | undefined): EffectiveSettings {
  const check = models === undefined ? undefined : validateModelAndEffort(models, settings);
  const effort = check?.effort === 'not_applicable' ? undefined : settings.effort;
  return {
    ...(settings.model === undefined ? {} : { model: settings.model }),
    ...(effort === undefined ? {} : { effort }),
    autonomy: settings.autonomy,
  };
}
