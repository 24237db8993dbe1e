import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { ConfigEnv } from './secrets.js';

/** The file name One Works looks for in the working directory and the user's config directory. */
export const CONFIG_FILE_NAME = 'one-works.yaml';

/** `$XDG_STATE_HOME/one-works`, or `~/.local/state/one-works` when XDG_STATE_HOME is unset or relative. */
export function defaultStateDir(env: ConfigEnv): string {
  return join(xdgDir(env, 'XDG_STATE_HOME', ['.local', 'state']), 'one-works');
}

/** `$XDG_CACHE_HOME/one-works`, or `~/.cache/one-works` when XDG_CACHE_HOME is unset or relative. */
export function defaultCacheDir(env: ConfigEnv): string {
  return join(xdgDir(env, 'XDG_CACHE_HOME', ['.cache']), 'one-works');
}

/** `$XDG_CONFIG_HOME/one-works/one-works.yaml`, or `~/.config/one-works/one-works.yaml`. */
export function userConfigPath(env: ConfigEnv): string {
  return join(xdgDir(env, 'XDG_CONFIG_HOME', ['.config']), 'one-works', CONFIG_FILE_NAME);
}

// The XDG base directory spec says relative values are invalid and must be ignored.
function xdgDir(env: ConfigEnv, name: string, fallback: string[]): string {
  const value = env[name];
  if (value && isAbsolute(value)) return value;
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  return join(home, ...fallback);
}
