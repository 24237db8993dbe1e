import type { z } from 'zod';
import { mapWithSchema } from './schema-walk.js';

/** What a masked secret looks like in rendered configuration. */
export const SECRET_MASK = '***';

/** An environment as the loader sees it (`process.env` fits). */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

// `scheme://userinfo@`: the userinfo (user, password, or a token written as the user) is a credential.
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi;

/** True when `text` holds a URL with userinfo (`http://user:password@host`, `https://token@host`). */
export function hasUrlUserinfo(text: string): boolean {
  URL_USERINFO.lastIndex = 0;
  return URL_USERINFO.test(text);
}

/** `text` with the userinfo of every URL in it shown as `***` (`http://***@host/`). */
export function maskUrlUserinfo(text: string): string {
  return text.replace(URL_USERINFO, `$1${SECRET_MASK}@`);
}

/**
 * Returns a copy of `config` in which every string at a position the schema marks
 * `.meta({ secret: true })` is replaced by `***`, and the userinfo of any URL elsewhere is
 * (`http://***@host`). Unset secrets stay unset, so the output still shows which secrets are
 * configured. `config` must be a value the schema produced.
 */
export function maskSecrets<T>(schema: z.ZodType, config: T): T {
  const masked = mapWithSchema(schema, config, (value, meta) => (meta.secret && typeof value === 'string' ? SECRET_MASK : value));
  return mapStrings(masked, maskUrlUserinfo) as T;
}

function mapStrings(value: unknown, fn: (text: string) => string): unknown {
  if (typeof value === 'string') return fn(value);
  if (Array.isArray(value)) return value.map((item) => mapStrings(item, fn));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mapStrings(item, fn)]));
  }
  return value;
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
