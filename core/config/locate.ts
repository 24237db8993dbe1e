import { closeSync, openSync, readSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { OneWorksError } from '../errors.js';
import { interpolate } from './interpolate.js';
import { configInvalid } from './issues.js';
import { keptConfigValue } from './value-cache.js';
import { CONFIG_FILE_NAME, defaultStateDir, userConfigPath } from './paths.js';
import type { ConfigEnv } from './secrets.js';

// Finding the config file and reading where the state lives from it, apart from the schema (zod)
// and the full load (load.ts): `run` locates its orchestrator with these alone before anything
// else loads (cli/early-intent.ts, a bundle of its own).

/** Largest config file read, in bytes: a config is a page of settings, never megabytes. */
export const MAX_CONFIG_BYTES = 128 * 1024;

/**
 * Most alias expansions while building the value (the yaml package's `maxAliasCount`): enough
 * for anchors reused by hand, far below an alias bomb ("billion laughs").
 */
export const MAX_CONFIG_ALIASES = 100;

/**
 * The config file a command reads, found as `loadConfig` (load.ts) finds it (its one search): `path`
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
    const value = keptConfigValue(found.path, found.text)?.value ?? parseValue(found.text);
    if (value === undefined) return undefined;
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

// The plain value of a config text's YAML (before interpolation), or undefined when it has errors.
function parseValue(text: string): unknown {
  const doc = parseDocument(text);
  if (doc.errors.length > 0) return undefined;
  return doc.contents === null ? {} : doc.toJS({ maxAliasCount: MAX_CONFIG_ALIASES });
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

/** How messages name the file, the way the user would: relative inside cwd, absolute elsewhere. */
export function displayName(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}
