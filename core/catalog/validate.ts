import { OneWorksError } from '../errors.js';
import type { CatalogModel } from './schema.js';

/** The model value that means "keep the CLI's own default": never checked. */
export const INHERIT_MODEL = 'inherit';

/** How many model ids an error message suggests. */
const SUGGESTIONS = 5;

/** What {@link validateModelAndEffort} concluded about an accepted request. */
export interface ModelAndEffortCheck {
  /** The catalog entry of the requested model; undefined when the model was not checked. */
  model: CatalogModel | undefined;
  /**
   * `checked`: the effort is one the model supports. `not_applicable`: the model has no
   * effort levels (it reports only "none"), so the effort is accepted and has no effect.
   * `unchecked`: no model or no effort to check against (inherit, or the model lists none).
   */
  effort: 'checked' | 'not_applicable' | 'unchecked';
  /** Things a person should know (deprecated model, ignored effort), one sentence each. */
  notes: string[];
}

/**
 * Checks a requested model and reasoning effort against a catalog before a turn starts.
 *
 * - model undefined or `inherit`: the model is not checked, nor is the effort (the model that
 *   will run is unknown here).
 * - a model absent from the catalog, or listed as disabled: OneWorksError `model_unavailable`,
 *   naming a few available ids (closest first) and `one-works models`.
 * - an effort the model does not list: OneWorksError `effort_unsupported`, listing the
 *   supported ones.
 * - a model whose only effort is `none` (BYOK chat models, which the CLI resets to `none`
 *   whatever was asked): any effort is accepted and reported as `not_applicable`, because the
 *   configured default effort applies to every model and must not make such models unusable.
 * - a deprecated model is accepted with a note.
 */
export function validateModelAndEffort(
  models: readonly CatalogModel[],
  request: { model?: string | undefined; effort?: string | undefined },
): ModelAndEffortCheck {
  if (request.model === undefined || request.model === INHERIT_MODEL) return { model: undefined, effort: 'unchecked', notes: [] };
  const model = models.find((m) => m.id === request.model);
  if (!model || model.disabled) throw unavailable(models, request.model, model);
  const notes: string[] = [];
  if (model.deprecated) notes.push(`model ${model.id} is deprecated; \`one-works models\` lists current ones`);
  const effort = request.effort;
  if (effort === undefined || model.efforts.length === 0) return { model, effort: 'unchecked', notes };
  if (model.efforts.length === 1 && model.efforts[0] === 'none' && effort !== 'none') {
    notes.push(`model ${model.id} has no reasoning effort levels; effort "${effort}" does not apply and is ignored`);
    return { model, effort: 'not_applicable', notes };
  }
  if (!model.efforts.includes(effort)) {
    throw new OneWorksError(
      'effort_unsupported',
      `model ${model.id} does not support reasoning effort "${effort}"; supported: ${model.efforts.join(', ')}${model.defaultEffort ? ` (default ${model.defaultEffort})` : ''}`,
      { data: { model: model.id, effort, supported: model.efforts } },
    );
  }
  return { model, effort: 'checked', notes };
}

function unavailable(models: readonly CatalogModel[], requested: string, listed: CatalogModel | undefined): OneWorksError {
  const usable = models.filter((m) => !m.disabled && !m.deprecated).map((m) => m.id);
  const suggested = [...usable].sort((a, b) => distance(requested, a) - distance(requested, b)).slice(0, SUGGESTIONS);
  const why = listed
    ? `model ${requested} is disabled${listed.disabledReason ? ` (${listed.disabledReason})` : ''}`
    : `model ${requested} is not available`;
  const some = suggested.length > 0 ? `; available include ${suggested.join(', ')}` : '; no model is available';
  return new OneWorksError('model_unavailable', `${why}${some}; \`one-works models\` shows all`, {
    data: { model: requested, suggestions: suggested },
  });
}

// Case-insensitive edit distance, to put the ids closest to a typo first.
function distance(a: string, b: string): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    for (let j = 1; j <= y.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[y.length]!;
}
