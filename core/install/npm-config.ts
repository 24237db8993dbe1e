import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import path from 'node:path';
import { OneWorksError } from '../errors.js';

/** The public npm registry, used when nothing else is configured. */
export const DEFAULT_REGISTRY = 'https://registry.npmjs.org/';

/**
 * The part of a user's npm configuration an install needs. `authTokens` are secrets: they are
 * handed to the registry client and never put into a message, a log line or error data.
 */
export interface RegistryConfig {
  /** Default registry URL, with a trailing slash. */
  registry: string;
  /** `@scope` → registry URL (trailing slash) from `@scope:registry=` lines. */
  scopes: Readonly<Record<string, string>>;
  /** npm "nerf darts" (`//host/path/`) → bearer token, from `//host/path/:_authToken=` lines. */
  authTokens: Readonly<Record<string, string>>;
}

/** Where to look for npm configuration. */
export interface ReadNpmConfigOptions {
  /** Directory whose `.npmrc` is the project config (highest file precedence). */
  projectDir: string;
  /** Environment for `npm_config_registry`, `npm_config_userconfig` and `${VAR}` expansion. */
  env: Readonly<Record<string, string | undefined>>;
  /** Home directory for `~/.npmrc`; defaults to `os.homedir()`. */
  homeDir?: string;
}

/**
 * Reads the registry settings the way npm resolves them, without spawning npm:
 * `npm_config_registry` from the environment, then `<projectDir>/.npmrc`, then the user config
 * (`npm_config_userconfig` or `~/.npmrc`), then {@link DEFAULT_REGISTRY}. Missing files are
 * fine; an unreadable one rejects with `install_failed` naming the file.
 */
export async function readNpmConfig(options: ReadNpmConfigOptions): Promise<RegistryConfig> {
  const env = options.env;
  const userConfig = lookupEnv(env, 'npm_config_userconfig') ?? path.join(options.homeDir ?? homedir(), '.npmrc');
  // Lowest precedence first: later entries overwrite earlier keys.
  const files = [userConfig, path.join(options.projectDir, '.npmrc')];
  const merged = new Map<string, string>();
  for (const file of files) {
    const text = await readOptional(file);
    if (text !== undefined) for (const [key, value] of parseNpmrc(text, env)) merged.set(key, value);
  }
  const envRegistry = lookupEnv(env, 'npm_config_registry');
  if (envRegistry) merged.set('registry', envRegistry);
  return toRegistryConfig(merged);
}

/**
 * Parses `.npmrc` (ini) text into key/value pairs: `;` and `#` comments, optional quotes,
 * `${VAR}` expanded from `env` (unset variables expand to an empty string). Sections are ignored.
 */
export function parseNpmrc(text: string, env: Readonly<Record<string, string | undefined>>): Map<string, string> {
  const entries = new Map<string, string>();
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (line === '' || line.startsWith(';') || line.startsWith('#') || line.startsWith('[')) continue;
    const eq = line.indexOf('=');
    if (eq <= 0) continue;
    const key = expand(line.slice(0, eq).trim(), env);
    const value = expand(unquote(line.slice(eq + 1).trim()), env);
    entries.set(key, value);
  }
  return entries;
}

function toRegistryConfig(entries: Map<string, string>): RegistryConfig {
  const scopes: Record<string, string> = {};
  const authTokens: Record<string, string> = {};
  for (const [key, value] of entries) {
    const scoped = /^(@[^:/]+):registry$/.exec(key);
    if (scoped?.[1] && value) scopes[scoped[1]] = withSlash(value);
    const nerf = /^(\/\/.+):_authToken$/.exec(key);
    if (nerf?.[1] && value) authTokens[nerf[1]] = value;
  }
  const registry = entries.get('registry');
  return { registry: registry ? withSlash(registry) : DEFAULT_REGISTRY, scopes, authTokens };
}

// npm accepts both npm_config_x and NPM_CONFIG_X.
function lookupEnv(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  return env[name] || env[name.toUpperCase()] || undefined;
}

function expand(value: string, env: Readonly<Record<string, string | undefined>>): string {
  return value.replace(/\$\{([^}]+)\}/g, (_, name: string) => env[name] ?? '');
}

function unquote(value: string): string {
  if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) return value.slice(1, -1);
  return value;
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

async function readOptional(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw new OneWorksError('install_failed', `could not read npm config ${file}: ${code ?? 'error'}`, {
      data: { file },
      cause: error,
    });
  }
}
