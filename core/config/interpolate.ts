import { isMap, isScalar, isSeq, type Document, type Node } from 'yaml';
import type { ConfigEnv } from './secrets.js';

/** The outcome of interpolating one string. */
export type InterpolationResult = { ok: true; value: string } | { ok: false; message: string };

/** Receives each value taken from the environment (not `:-default` fallbacks written in the file). */
export type OnEnvValue = (value: string) => void;

/** A reference that could not be resolved, with the scalar it occurred in. */
export interface InterpolationIssue {
  node: Node;
  path: Array<string | number>;
  message: string;
}

// `$${` (escape), a closed `${…}`, or an unclosed `${`.
const TOKEN = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?$/s;

/**
 * Expands `${NAME}` and `${NAME:-default}` in `text` from `env`; `$${` stands for a literal `${`.
 * `${NAME}` with NAME unset is a failure naming the variable; `:-default` applies when NAME is
 * unset or empty (as in POSIX shells). The result is always a string. Messages name variables,
 * never their values.
 */
export function interpolate(text: string, env: ConfigEnv, onEnvValue?: OnEnvValue): InterpolationResult {
  let failure: string | undefined;
  const value = text.replace(TOKEN, (match: string, body: string | undefined) => {
    if (match === '$${') return '${';
    const reference = body === undefined ? undefined : REFERENCE.exec(body);
    if (!reference) {
      failure ??= `invalid reference ${JSON.stringify(match)}: write \${NAME} or \${NAME:-default}, or $\${ for a literal \${`;
      return match;
    }
    const [, name = '', fallback] = reference;
    const set = env[name];
    if (fallback !== undefined && (set === undefined || set === '')) return fallback;
    if (set !== undefined) {
      onEnvValue?.(set);
      return set;
    }
    failure ??= `environment variable ${name} is not set; set it, or write \${${name}:-default}`;
    return match;
  });
  return failure === undefined ? { ok: true, value } : { ok: false, message: failure };
}

/**
 * A copy of `value` (the plain value a config's YAML gives) with every string that is a value (not
 * a mapping key) interpolated, as {@link interpolateDocument} does on the document: undefined when
 * a reference fails (the document then says where).
 */
export function interpolateValue(value: unknown, env: ConfigEnv): { value: unknown } | undefined {
  let failed = false;
  const visit = (item: unknown): unknown => {
    if (typeof item === 'string') {
      const result = interpolate(item, env);
      if (!result.ok) failed = true;
      return result.ok ? result.value : item;
    }
    if (Array.isArray(item)) return item.map(visit);
    if (item !== null && typeof item === 'object') {
      const copy: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(item)) copy[key] = visit(inner);
      return copy;
    }
    return item;
  };
  const interpolated = visit(value);
  return failed ? undefined : { value: interpolated };
}

/**
 * Interpolates every string scalar VALUE of `doc` in place (keys are left alone) and returns the
 * references that failed, each with its node and key path. Aliases resolve to their anchors,
 * which are interpolated where they are defined. `onEnvValue` sees every value taken from `env`
 * (so that messages about the result can hide it: it may be a secret in a non-secret field).
 */
export function interpolateDocument(doc: Document, env: ConfigEnv, onEnvValue?: OnEnvValue): InterpolationIssue[] {
  const issues: InterpolationIssue[] = [];
  const visit = (node: unknown, path: Array<string | number>): void => {
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = isScalar(pair.key) ? pair.key.value : pair.key;
        visit(pair.value, [...path, String(key)]);
      }
    } else if (isSeq(node)) {
      for (const [index, item] of node.items.entries()) visit(item, [...path, index]);
    } else if (isScalar(node) && typeof node.value === 'string') {
      const result = interpolate(node.value, env, onEnvValue);
      if (result.ok) node.value = result.value;
      else issues.push({ node, path, message: result.message });
    }
  };
  visit(doc.contents, []);
  return issues;
}
