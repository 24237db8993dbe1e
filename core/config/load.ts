import { closeSync, openSync, readSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { type Document, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { OneWorksError } from '../errors.js';
import { Redactor } from '../redact.js';
import { interpolate, interpolateDocument } from './interpolate.js';
import { configInvalid, formatPath, positionOf, syntaxIssues } from './issues.js';
import { CONFIG_FILE_NAME, defaultCacheDir, defaultStateDir, userConfigPath } from './paths.js';
import {
  type AdapterSchemas,
  type ConfigSchema,
  type ConfigView,
  configSchemaFor,
  type OneWorksConfig,
  type ParsedConfig,
} from './schema.js';
import { applyEnvDefaults, type ConfigEnv, collectSecrets } from './secrets.js';
import { describeZodIssues } from './zod-issues.js';

/** Largest config file read, in bytes: a config is a page of settings, never megabytes. */
export const MAX_CONFIG_BYTES = 128 * 1024;

/**
 * Most alias expansions while building the value (the yaml package's `maxAliasCount`): enough
 * for anchors reused by hand, far below an alias bomb ("billion laughs").
 */
export const MAX_CONFIG_ALIASES = 100;

export interface LoadConfigOptions<A extends AdapterSchemas> {
  /** The schema from `createConfigSchema(adapters)`. */
  schema: ConfigSchema<A>;
  /** Explicit config file (resolved against `cwd`); it must exist. */
  path?: string;
  cwd: string;
  /** Source of `${VAR}` interpolation, XDG directories and `.meta({ env })` defaults. */
  env: ConfigEnv;
  /**
   * Called with the config's secrets (fields marked `.meta({ secret: true })`, those filled from
   * the environment too) as they become known: at load for what the file names, and for an
   * adapter block the file leaves out when it is first read (its defaults are filled then), so
   * that a caller registers each with its redactor before the value can be used.
   */
  onSecrets?: (secrets: string[]) => void;
}

export interface LoadedConfig<A extends AdapterSchemas> {
  config: OneWorksConfig<A>;
  /** Absolute path of the file read; undefined when none was found. */
  path: string | undefined;
  source: 'file' | 'none';
  /**
   * The keys the file sets itself, as dotted paths (`adapters.droid.effort`; every enclosing
   * mapping too): a value the schema filled in by default is not among them, so a caller can tell
   * an explicit `effort: high` from the default `high`.
   */
  explicitKeys: ReadonlySet<string>;
}

/**
 * Finds, reads and validates one-works.yaml. Without `path` it tries `<cwd>/one-works.yaml`, then
 * `$XDG_CONFIG_HOME/one-works/one-works.yaml`; when neither exists it returns the defaults with
 * `source: 'none'` (the caller decides what to approve and says so). Fills the state and cache
 * directories from the XDG environment and `.meta({ env })` fields from `env`.
 * Throws OneWorksError 'config_not_found' when an explicit `path` cannot be read, and
 * 'config_invalid' (all problems, one per line, `file:line:col: key.path: expectation`), also for
 * a file over MAX_CONFIG_BYTES or one whose aliases expand more than MAX_CONFIG_ALIASES times.
 */
export async function loadConfig<A extends AdapterSchemas>(options: LoadConfigOptions<A>): Promise<LoadedConfig<A>> {
  const { schema, cwd, env } = options;
  const found = findConfigFile(options);
  if (found) {
    const { parsed, input, view } = parseConfigInput(found.text, { schema, env, file: displayName(found.path, cwd) });
    const config = resolveDefaults(view, parsed, env, options.onSecrets);
    return { config, path: found.path, source: 'file', explicitKeys: keyPaths(input) };
  }
  const { parsed, view } = parseConfigInput('', { schema, env, file: CONFIG_FILE_NAME });
  return { config: resolveDefaults(view, parsed, env, options.onSecrets), path: undefined, source: 'none', explicitKeys: new Set() };
}

/**
 * The config file a command reads, found as {@link loadConfig} finds it (its one search): `path`
 * resolved against `cwd` (which must be readable), else `<cwd>/one-works.yaml`, else the user's
 * config file. Undefined when no implicit candidate exists. Throws as loadConfig does for a file
 * that cannot be read or is too large.
 */
export function findConfigFile(options: {
  path?: string | undefined;
  cwd: string;
  env: ConfigEnv;
}): { path: string; text: string } | undefined {
  const { cwd, env } = options;
  const candidates = options.path === undefined ? [join(cwd, CONFIG_FILE_NAME), userConfigPath(env)] : [resolve(cwd, options.path)];
  for (const candidate of candidates) {
    const text = readText(candidate, options.path !== undefined, displayName(candidate, cwd));
    if (text !== undefined) return { path: candidate, text };
  }
  return undefined;
}

/** Where a command's state lives, as far as the config file says before it is validated (see {@link locateState}). */
export interface LocatedState {
  /** The config file found (undefined: none, the defaults apply). */
  configPath: string | undefined;
  /** The state directory: `state.directory` (`${VAR}` expanded as the schema sees it), else the XDG default. */
  stateDir: string;
}

/**
 * The state directory a command will have, read early: the config file found by
 * {@link findConfigFile} (as loadConfig), its YAML parsed, and only `state.directory` and
 * `state.backend` looked at. Undefined whenever the full load could disagree or fail: no readable
 * file, YAML errors, a `state.directory` that is not an absolute path after `${VAR}` expansion,
 * or a backend other than `file`. The caller still loads the config whole, and trusts this only
 * when the loaded config's state directory is the same.
 */
export function locateState(options: { path?: string | undefined; cwd: string; env: ConfigEnv }): LocatedState | undefined {
  try {
    const found = findConfigFile(options);
    if (!found) return { configPath: undefined, stateDir: defaultStateDir(options.env) };
    const doc = parseDocument(found.text);
    if (doc.errors.length > 0) return undefined;
    const value: unknown = doc.contents === null ? {} : doc.toJS({ maxAliasCount: MAX_CONFIG_ALIASES });
    const state = (value as { state?: unknown } | null)?.state;
    if (state === undefined || state === null) return { configPath: found.path, stateDir: defaultStateDir(options.env) };
    if (typeof state !== 'object') return undefined;
    const { directory, backend } = state as { directory?: unknown; backend?: unknown };
    const expand = (scalar: unknown): string | undefined => {
      if (typeof scalar !== 'string') return undefined;
      const result = interpolate(scalar, options.env);
      return result.ok ? result.value : undefined;
    };
    if (backend !== undefined && expand(backend) !== 'file') return undefined;
    if (directory === undefined) return { configPath: found.path, stateDir: defaultStateDir(options.env) };
    const stateDir = expand(directory);
    return stateDir !== undefined && isAbsolute(stateDir) ? { configPath: found.path, stateDir } : undefined;
  } catch {
    return undefined;
  }
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
  const { parsed, view } = parseConfigInput(text, options);
  return withAbsentBlocks(parsed, view, (block) => block.parse(undefined, { jitless: true }));
}

// parseConfigText, keeping the plain (interpolated) YAML value the schema parsed and the view it
// was parsed with: the adapter blocks the text leaves out are not in `parsed` (see withAbsentBlocks).
function parseConfigInput<A extends AdapterSchemas>(
  text: string,
  options: { schema: ConfigSchema<A>; env: ConfigEnv; file: string },
): { parsed: ParsedConfig<A>; input: unknown; view: ConfigView } {
  const { schema, env, file } = options;
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) throw configInvalid(file, syntaxIssues(doc.errors));
  const locate = (path: readonly PropertyKey[], key?: string) => positionOf(doc, lineCounter, path, key);
  // Values from the environment may be secrets even in a field that is not one: every message
  // built from here on passes a redactor that knows them, and shows none of them.
  const fromEnv = new Redactor();
  const unresolved = interpolateDocument(doc, env, (value) => fromEnv.register(value));
  if (unresolved.length > 0) {
    throw configInvalid(
      file,
      unresolved.map(({ path, message }) => ({ ...locate(path), path: formatPath(path), message })),
    );
  }
  const input: unknown = doc.contents === null ? {} : toValue(doc, file);
  // Without zod's JIT: it compiles a parser per object schema on first use, which pays off over
  // many parses, and a process parses its config once (a third of a short command's start).
  let view = configSchemaFor(schema, input);
  let result = view.schema.safeParse(input, { jitless: true });
  // Invalid: parsed again whole, so that the problems are found and described as by the whole schema.
  if (!result.success && view.schema !== schema) {
    view = { schema, absentBlocks: new Map(), adapterNames: [] };
    result = schema.safeParse(input, { jitless: true });
  }
  if (!result.success) {
    const issues = describeZodIssues(result.error.issues, schema, input, locate, (value) => fromEnv.redact(value) !== value);
    throw configInvalid(
      file,
      issues.map((issue) => ({ ...issue, message: fromEnv.redact(issue.message) })),
    );
  }
  return { parsed: result.data as ParsedConfig<A>, input, view };
}

// `config` with each adapter block the view left out filled in by `fill` when first read (then
// kept), in the schema's order: to whoever reads it, the value a whole parse gives.
function withAbsentBlocks<T>(config: T, view: ConfigView, fill: (block: z.ZodType) => unknown): T {
  if (view.absentBlocks.size === 0) return config;
  const parsed = config as T & { adapters: Record<string, unknown> };
  const adapters: Record<string, unknown> = {};
  const keep = (name: string, value: unknown): void => {
    Object.defineProperty(adapters, name, { value, enumerable: true, configurable: true, writable: true });
  };
  for (const name of view.adapterNames) {
    const block = view.absentBlocks.get(name);
    if (!block) {
      if (Object.hasOwn(parsed.adapters, name)) adapters[name] = parsed.adapters[name];
      continue;
    }
    Object.defineProperty(adapters, name, {
      enumerable: true,
      configurable: true,
      get: () => {
        const value = fill(block);
        keep(name, value);
        return value;
      },
      set: (value: unknown) => keep(name, value),
    });
  }
  return { ...parsed, adapters };
}

// The dotted paths of every mapping key in a plain YAML value (sequences are leaves).
function keyPaths(value: unknown, prefix = '', into = new Set<string>()): Set<string> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return into;
  for (const [key, child] of Object.entries(value)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    into.add(path);
    keyPaths(child, path, into);
  }
  return into;
}

// The plain value of the document; an alias bomb is a config error, not an internal one.
function toValue(doc: Document, file: string): unknown {
  try {
    return doc.toJS({ maxAliasCount: MAX_CONFIG_ALIASES });
  } catch (error) {
    if (!(error instanceof ReferenceError) || !/alias/i.test(error.message)) throw error;
    throw configInvalid(
      file,
      [{ path: '', message: `YAML aliases expand too often (more than ${MAX_CONFIG_ALIASES} times); write the values out instead` }],
      error,
    );
  }
}

// Fills what depends on the environment: XDG directories and `.meta({ env })` credentials (those of
// a left-out adapter block when it is first read), and hands the secrets to `onSecrets`.
function resolveDefaults<A extends AdapterSchemas>(
  view: ConfigView,
  parsed: ParsedConfig<A>,
  env: ConfigEnv,
  onSecrets: ((secrets: string[]) => void) | undefined,
): OneWorksConfig<A> {
  const filled = applyEnvDefaults(view.schema, parsed, env);
  onSecrets?.(collectSecrets(view.schema, filled));
  const config = withAbsentBlocks(filled, view, (block) => {
    const value = applyEnvDefaults(block, block.parse(undefined, { jitless: true }), env);
    onSecrets?.(collectSecrets(block, value));
    return value;
  });
  return {
    ...config,
    state: { ...config.state, directory: config.state.directory ?? defaultStateDir(env) },
    cache: { ...config.cache, directory: config.cache.directory ?? defaultCacheDir(env) },
  } as OneWorksConfig<A>;
}

// A missing implicit candidate is skipped; anything else unreadable is an error. Reads at most
// MAX_CONFIG_BYTES + 1 bytes: a larger file is refused before it is parsed. Read at once (a local
// file of a page or so): every command reads it as it starts, where the thread pool's round trips
// of an asynchronous read (open, read until the end, close) would wait on each other.
function readText(path: string, explicit: boolean, file: string): string | undefined {
  let bytes: Buffer;
  try {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(MAX_CONFIG_BYTES + 1);
      let length = 0;
      for (;;) {
        const bytesRead = readSync(fd, buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length === buffer.length) break;
      }
      bytes = buffer.subarray(0, length);
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (!explicit && (code === 'ENOENT' || code === 'ENOTDIR')) return undefined;
    throw new OneWorksError('config_not_found', `cannot read config file ${path}: ${code ?? String(error)}`, {
      data: { path, code },
      cause: error,
    });
  }
  if (bytes.length > MAX_CONFIG_BYTES) {
    throw configInvalid(file, [
      {
        path: '',
        message: `the file is larger than ${MAX_CONFIG_BYTES / 1024} KiB, the most a config file may be; is this the right file?`,
      },
    ]);
  }
  return bytes.toString('utf8');
}

// Messages name the file the way the user would: relative inside cwd, absolute elsewhere.
function displayName(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
