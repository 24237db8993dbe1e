import { type Document, LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { Redactor } from '../redact.js';
import { interpolateDocument, interpolateValue } from './interpolate.js';
import { configInvalid, formatPath, positionOf, syntaxIssues } from './issues.js';
import { displayName, findConfigFile, MAX_CONFIG_ALIASES } from './locate.js';
import { CONFIG_FILE_NAME, defaultCacheDir, defaultStateDir } from './paths.js';
import {
  type AdapterSchemas,
  type ConfigSchema,
  type ConfigView,
  configSchemaFor,
  type OneWorksConfig,
  type ParsedConfig,
} from './schema.js';
import { type SecretPath, secretsAtPaths } from './secret-paths.js';
import { applyEnvDefaults, type ConfigEnv, collectSecrets } from './secrets.js';
import { keepConfigValue, keptConfigValue } from './value-cache.js';
import { describeZodIssues } from './zod-issues.js';

export { findConfigFile, type LocatedState, locateState, MAX_CONFIG_ALIASES, MAX_CONFIG_BYTES } from './locate.js';

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
  /**
   * The adapter blocks the file names are parsed when first read, as the ones it leaves out are,
   * not at load: for a command that reads none (createContext's `adapters: false`), building their
   * schemas is most of its configuration's cost. The secrets of each are found at load at its
   * `secretPaths` (core/config/secret-paths.ts) and handed to `onSecrets`; a block without an entry
   * there is parsed at load. An invalid block throws `config_invalid` (the message a load that
   * parsed it would have thrown) when first read, not at load.
   */
  deferredBlocks?: { secretPaths: Readonly<Record<string, readonly SecretPath[]>> };
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
    const file = displayName(found.path, cwd);
    // Every secret handed on, to keep none of them in core/config/value-cache.ts's file.
    const secrets: string[] = [];
    const onSecrets = (known: string[]): void => {
      secrets.push(...known);
      options.onSecrets?.(known);
    };
    const { parsed, input, view, deferred, raw } = parseConfigInput(found.text, {
      schema,
      env,
      file,
      deferrable: new Set(Object.keys(options.deferredBlocks?.secretPaths ?? {})),
      path: found.path,
    });
    const secretPaths = options.deferredBlocks?.secretPaths ?? {};
    for (const [name, block] of deferred) onSecrets(secretsAtPaths(secretPaths[name] ?? [], block.input, env));
    // A deferred block that does not parse: the whole text parsed again throws what a load that
    // parsed the block would have thrown, with its positions.
    const invalid = (name: string, error: unknown): never => {
      parseConfigInput(found.text, { schema, env, file });
      throw configInvalid(file, [{ path: `adapters.${name}`, message: 'does not match its schema' }], error);
    };
    const config = resolveDefaults(view, parsed, env, onSecrets, { deferred, invalid });
    if (raw) keepConfigValue(found.path, found.text, raw.value, secrets);
    return { config, path: found.path, source: 'file', explicitKeys: keyPaths(input) };
  }
  const { parsed, view } = parseConfigInput('', { schema, env, file: CONFIG_FILE_NAME });
  return { config: resolveDefaults(view, parsed, env, options.onSecrets), path: undefined, source: 'none', explicitKeys: new Set() };
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
  return withLazyBlocks(parsed, view, (block) => block.parse(undefined, { jitless: true }));
}

/** A named adapter block whose parse is deferred: its name, its schema and what the file gives for it. */
interface DeferredBlock {
  name: string;
  block: z.ZodType;
  input: unknown;
}

// parseConfigText, keeping the plain (interpolated) YAML value the schema parsed and the view it
// was parsed with: the adapter blocks the text leaves out, and those deferred, are not in `parsed`
// (see withLazyBlocks).
function parseConfigInput<A extends AdapterSchemas>(
  text: string,
  options: { schema: ConfigSchema<A>; env: ConfigEnv; file: string; deferrable?: ReadonlySet<string>; path?: string },
): ParsedInput<A> {
  const { schema, env, file } = options;
  // The value a command kept for this very text of the file (core/config/value-cache.ts): when it
  // interpolates and validates, the YAML is not parsed again. Otherwise (a reference that fails, an
  // invalid value) the text is, and says where.
  const kept = options.path === undefined ? undefined : keptConfigValue(options.path, text);
  if (kept) {
    const input = interpolateValue(kept.value, env);
    const checked = input && validate(input.value, options);
    if (input && checked?.result.success) return parsedInput(input.value, checked.view, checked.result.data, undefined);
  }
  // Whether to keep the value for the next command (none was kept for this text).
  const keep = options.path !== undefined && !kept;
  // No file, or an empty one: nothing for YAML to parse (its module is loaded when first needed in
  // the build: scripts/build.js CHUNKED_PACKAGES). An invalid value is described below, as any.
  if (text.trim() === '') {
    const checked = validate({}, options);
    if (checked.result.success) return parsedInput({}, checked.view, checked.result.data, keep ? { value: {} } : undefined);
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true });
  if (doc.errors.length > 0) throw configInvalid(file, syntaxIssues(doc.errors));
  // Before interpolation: the value to keep.
  const raw = keep ? { value: doc.contents === null ? {} : toValue(doc, file) } : undefined;
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
  const { view, result } = validate(input, options);
  if (!result.success) {
    const issues = describeZodIssues(result.error.issues, schema, input, locate, (value) => fromEnv.redact(value) !== value);
    throw configInvalid(
      file,
      issues.map((issue) => ({ ...issue, message: fromEnv.redact(issue.message) })),
    );
  }
  return parsedInput(input, view, result.data, raw);
}

/** What {@link parseConfigInput} gives: the parsed config, its input, how it was parsed, and the value to keep. */
interface ParsedInput<A extends AdapterSchemas> {
  parsed: ParsedConfig<A>;
  input: unknown;
  view: ConfigView;
  deferred: ReadonlyMap<string, DeferredBlock>;
  /** The YAML's value before interpolation, when the caller is to keep it (see core/config/value-cache.ts). */
  raw: { value: unknown } | undefined;
}

// The input parsed with the schema's view of it; when invalid, with the whole schema, so that the
// problems are found and described as by the whole schema.
function validate<A extends AdapterSchemas>(
  input: unknown,
  options: { schema: ConfigSchema<A>; deferrable?: ReadonlySet<string> },
): { view: ConfigView; result: ReturnType<ConfigView['schema']['safeParse']> } {
  const { schema } = options;
  // Without zod's JIT: it compiles a parser per object schema on first use, which pays off over
  // many parses, and a process parses its config once (a third of a short command's start).
  const view = configSchemaFor(schema, input, options.deferrable);
  const result = view.schema.safeParse(input, { jitless: true });
  if (result.success || view.schema === schema) return { view, result };
  return {
    view: { schema, absentBlocks: new Map(), deferredBlocks: new Map(), adapterNames: [] },
    result: schema.safeParse(input, { jitless: true }),
  };
}

function parsedInput<A extends AdapterSchemas>(
  input: unknown,
  view: ConfigView,
  data: unknown,
  raw: { value: unknown } | undefined,
): ParsedInput<A> {
  const adapters = (input as { adapters?: Record<string, unknown> }).adapters;
  const deferred = new Map([...view.deferredBlocks].map(([name, block]) => [name, { name, block, input: adapters?.[name] }]));
  return { parsed: data as ParsedConfig<A>, input, view, deferred, raw };
}

// `config` with each adapter block the view left out (absent from the text, or deferred) filled in
// by `fill` when first read (then kept), in the schema's order: to whoever reads it, the value a
// whole parse gives. `fill` gets a deferred block's name and what the text holds for it.
function withLazyBlocks<T>(
  config: T,
  view: ConfigView,
  fill: (block: z.ZodType, deferred?: DeferredBlock) => unknown,
  deferredBlocks: ReadonlyMap<string, DeferredBlock> = new Map(),
): T {
  if (view.absentBlocks.size === 0 && deferredBlocks.size === 0) return config;
  const parsed = config as T & { adapters: Record<string, unknown> };
  const adapters: Record<string, unknown> = {};
  const keep = (name: string, value: unknown): void => {
    Object.defineProperty(adapters, name, { value, enumerable: true, configurable: true, writable: true });
  };
  for (const name of view.adapterNames) {
    const deferred = deferredBlocks.get(name);
    const block = view.absentBlocks.get(name) ?? deferred?.block;
    if (!block) {
      if (Object.hasOwn(parsed.adapters, name)) adapters[name] = parsed.adapters[name];
      continue;
    }
    Object.defineProperty(adapters, name, {
      enumerable: true,
      configurable: true,
      get: () => {
        const value = fill(block, deferred);
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
  deferral: { deferred: ReadonlyMap<string, DeferredBlock>; invalid: (name: string, error: unknown) => never } = {
    deferred: new Map(),
    invalid: (_name, error) => {
      throw error;
    },
  },
): OneWorksConfig<A> {
  const { deferred, invalid } = deferral;
  const filled = applyEnvDefaults(view.schema, parsed, env);
  onSecrets?.(collectSecrets(view.schema, filled));
  const fill = (block: z.ZodType, named?: DeferredBlock): unknown => {
    let parsedBlock: unknown;
    if (named) {
      const result = block.safeParse(named.input, { jitless: true });
      parsedBlock = result.success ? result.data : invalid(named.name, result.error);
    } else parsedBlock = block.parse(undefined, { jitless: true });
    const value = applyEnvDefaults(block, parsedBlock, env);
    onSecrets?.(collectSecrets(block, value));
    return value;
  };
  const config = withLazyBlocks(filled, view, fill, deferred);
  return {
    ...config,
    state: { ...config.state, directory: config.state.directory ?? defaultStateDir(env) },
    cache: { ...config.cache, directory: config.cache.directory ?? defaultCacheDir(env) },
  } as OneWorksConfig<A>;
}
