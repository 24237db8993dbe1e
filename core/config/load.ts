import { readFile } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { OneWorksError } from '../errors.js';
import { interpolateDocument } from './interpolate.js';
import { configInvalid, formatPath, positionOf, syntaxIssues } from './issues.js';
import { CONFIG_FILE_NAME, defaultCacheDir, defaultStateDir, userConfigPath } from './paths.js';
import type { AdapterSchemas, ConfigSchema, OneWorksConfig, ParsedConfig } from './schema.js';
import { applyEnvDefaults, type ConfigEnv } from './secrets.js';
import { describeZodIssues } from './zod-issues.js';

export interface LoadConfigOptions<A extends AdapterSchemas> {
  /** The schema from `createConfigSchema(adapters)`. */
  schema: ConfigSchema<A>;
  /** Explicit config file (resolved against `cwd`); it must exist. */
  path?: string;
  cwd: string;
  /** Source of `${VAR}` interpolation, XDG directories and `.meta({ env })` defaults. */
  env: ConfigEnv;
}

export interface LoadedConfig<A extends AdapterSchemas> {
  config: OneWorksConfig<A>;
  /** Absolute path of the file read; undefined when none was found. */
  path: string | undefined;
  source: 'file' | 'none';
}

/**
 * Finds, reads and validates one-works.yaml. Without `path` it tries `<cwd>/one-works.yaml`, then
 * `$XDG_CONFIG_HOME/one-works/one-works.yaml`; when neither exists it returns the defaults with
 * `source: 'none'` (the caller decides what to approve and says so). Fills the state and cache
 * directories from the XDG environment and `.meta({ env })` fields from `env`.
 * Throws OneWorksError 'config_not_found' when an explicit `path` cannot be read, and
 * 'config_invalid' (all problems, one per line, `file:line:col: key.path: expectation`).
 */
export async function loadConfig<A extends AdapterSchemas>(options: LoadConfigOptions<A>): Promise<LoadedConfig<A>> {
  const { schema, cwd, env } = options;
  const candidates = options.path === undefined ? [join(cwd, CONFIG_FILE_NAME), userConfigPath(env)] : [resolve(cwd, options.path)];
  for (const candidate of candidates) {
    const text = await readText(candidate, options.path !== undefined);
    if (text === undefined) continue;
    const parsed = parseConfigText(text, { schema, env, file: displayName(candidate, cwd) });
    return { config: resolveDefaults(schema, parsed, env), path: candidate, source: 'file' };
  }
  const parsed = parseConfigText('', { schema, env, file: CONFIG_FILE_NAME });
  return { config: resolveDefaults(schema, parsed, env), path: undefined, source: 'none' };
}

/**
 * Parses and validates config text: YAML syntax, `${VAR}` interpolation, then the schema.
 * `file` is the name used in messages. Throws OneWorksError('config_invalid') listing every
 * problem found at the first stage that failed. Directories are left as written.
 */
export function parseConfigText<A extends AdapterSchemas>(
  text: string,
  options: { schema: ConfigSchema<A>; env: ConfigEnv; file: string },
): ParsedConfig<A> {
  const { schema, env, file } = options;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) throw configInvalid(file, syntaxIssues(doc.errors));
  const locate = (path: readonly PropertyKey[], key?: string) => positionOf(doc, lineCounter, path, key);
  const unresolved = interpolateDocument(doc, env);
  if (unresolved.length > 0) {
    throw configInvalid(
      file,
      unresolved.map(({ path, message }) => ({ ...locate(path), path: formatPath(path), message })),
    );
  }
  const input: unknown = doc.contents === null ? {} : doc.toJS();
  const result = schema.safeParse(input);
  if (!result.success) throw configInvalid(file, describeZodIssues(result.error.issues, schema, input, locate), result.error);
  return result.data;
}

// Fills what depends on the environment: XDG directories and `.meta({ env })` credentials.
function resolveDefaults<A extends AdapterSchemas>(schema: z.ZodType, parsed: ParsedConfig<A>, env: ConfigEnv): OneWorksConfig<A> {
  const filled = applyEnvDefaults(schema, parsed, env);
  return {
    ...filled,
    state: { ...filled.state, directory: filled.state.directory ?? defaultStateDir(env) },
    cache: { ...filled.cache, directory: filled.cache.directory ?? defaultCacheDir(env) },
  } as OneWorksConfig<A>;
}

// A missing implicit candidate is skipped; anything else unreadable is an error.
async function readText(path: string, explicit: boolean): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!explicit && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
    throw new OneWorksError('config_not_found', `cannot read config file ${path}: ${code ?? String(error)}`, {
      data: { path, code },
      cause: error,
    });
  }
}

// Messages name the file the way the user would: relative inside cwd, absolute elsewhere.
function displayName(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
