import type { z } from 'zod';
import { mapWithSchema } from './schema-walk.js';

/** What a masked secret looks like in rendered configuration. */
export const SECRET_MASK = '***';

/** An environment as the loader sees it (`process.env` fits). */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

/**
 * Returns a copy of `config` in which every string at a position the schema marks
 * `.meta({ secret: true })` is replaced by `***`. Unset secrets stay unset, so the output still
 * shows which secrets are configured. `config` must be a value the schema produced.
 */
export function maskSecrets<T>(schema: z.ZodType, config: T): T {
  return mapWithSchema(schema, config, (value, meta) => (meta.secret && typeof value === 'string' ? SECRET_MASK : value)) as T;
}

/**
 * Every non-empty secret string in `config` (deduplicated, in walk order), for registering with
 * the session's Redactor before anything leaves the process.
 */
export function collectSecrets(schema: z.ZodType, config: unknown): string[] {
  const found = new Set<string>();
  mapWithSchema(schema, config, (value, meta) => {
    if (meta.secret && typeof value === 'string' && value.length > 0) found.add(value);
    return value;
  });
  return [...found];
}

/**
 * Returns a copy of `config` where every unset key whose schema carries `.meta({ env: 'NAME' })`
 * takes the value of NAME from `env`, when NAME is set and non-empty. Values are not validated
 * again: such fields must be plain strings.
 */
export function applyEnvDefaults<T>(schema: z.ZodType, config: T, env: ConfigEnv): T {
  return mapWithSchema(schema, config, (value, meta) => {
    if (value !== undefined || !meta.env) return value;
    const fromEnv = env[meta.env];
    return fromEnv === undefined || fromEnv === '' ? value : fromEnv;
  }) as T;
}
