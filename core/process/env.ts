import path from 'node:path';
import { OneWorksError, ERROR_CODES } from '../errors.js';

/**
 * Variables copied from the parent environment into every child (when set). Everything else in
 * the parent's environment stays behind (cf. MCP `DEFAULT_INHERITED_ENV_VARS`).
 */
export const INHERITED_ENV_VARS = [
  'PATH',
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'NO_COLOR',
  'TERM',
  'COLORTERM',
  'SHELL',
  'USER',
  'LOGNAME',
] as const;

/**
 * The inherited variables that only shape how output looks (terminal type, colour). They are no
 * part of an orchestrator's identity (cli/daemon/fingerprint.ts): a client sends its own values
 * with each turn, and the agent started for that turn gets them instead of the server's.
 */
export const PRESENTATION_ENV_VARS = ['TERM', 'COLORTERM', 'NO_COLOR'] as const satisfies ReadonlyArray<
  (typeof INHERITED_ENV_VARS)[number]
>;

/** Values of {@link PRESENTATION_ENV_VARS} a client passes with a turn. */
export type PresentationEnv = Partial<Record<(typeof PRESENTATION_ENV_VARS)[number], string>>;

/** The presentation variables set in `env`, and only those. */
export function presentationOf(env: Readonly<Record<string, string | undefined>>): PresentationEnv {
  const picked: PresentationEnv = {};
  for (const name of PRESENTATION_ENV_VARS) {
    const value = env[name];
    if (value !== undefined) picked[name] = value;
  }
  return picked;
}

/** `env` with its presentation variables replaced by `presentation` (unset where it has none). */
export function withPresentation(env: NodeJS.ProcessEnv, presentation: PresentationEnv): NodeJS.ProcessEnv {
  const next: NodeJS.ProcessEnv = { ...env };
  for (const name of PRESENTATION_ENV_VARS) delete next[name];
  return { ...next, ...presentation };
}

/** The XDG roots of a session, relative to its HOME; core/sandbox creates them, the child env points at them. */
export const SESSION_XDG_DIRS = {
  XDG_CONFIG_HOME: '.config',
  XDG_CACHE_HOME: '.cache',
  XDG_DATA_HOME: '.local/share',
  XDG_STATE_HOME: '.local/state',
} as const;

export interface BuildChildEnvOptions {
  /** The environment to pick from (usually `process.env`); only allowlisted names and named credentials are read. */
  parentEnv: Readonly<Record<string, string | undefined>>;
  /** The session HOME (absolute). */
  home: string;
  /** Variables the adapter's launch adds (`LaunchSpec.env`). */
  additions?: Readonly<Record<string, string>>;
  /**
   * The credentials the configuration names explicitly: either names to read from `parentEnv`,
   * or name → value (values resolved elsewhere). A credential crosses only when its value is
   * set and non-empty.
   */
  credentials?: readonly string[] | Readonly<Record<string, string | undefined>>;
}

/**
 * Builds a child's complete environment: the allowlist from `parentEnv`, then HOME and the four
 * XDG roots inside `home`, then `additions`, then the named credentials that are set. Nothing
 * else crosses. Pure: reads nothing but its arguments.
 *
 * Throws OneWorksError `internal` when `home` is not absolute or when `additions` tries to
 * point HOME or an XDG root somewhere else (that would leak the agent out of its sandbox).
 * The caller registers credential values with the session's Redactor; this function does not.
 */
export function buildChildEnv(options: BuildChildEnvOptions): Record<string, string> {
  const { parentEnv, home, additions = {}, credentials = [] } = options;
  if (!path.isAbsolute(home)) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, `session home must be an absolute path, got ${home}`);
  }
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV_VARS) {
    const value = parentEnv[name];
    if (value !== undefined) env[name] = value;
  }
  const sandbox = sandboxVars(home);
  Object.assign(env, sandbox);
  for (const [name, value] of Object.entries(additions)) {
    if (name in sandbox && sandbox[name] !== value) {
      throw new OneWorksError(
        ERROR_CODES.INTERNAL,
        `launch environment may not override ${name}: the sandbox sets it to a path inside the session home`,
        { data: { name } },
      );
    }
    env[name] = value;
  }
  const named: Array<[string, string | undefined]> = Array.isArray(credentials)
    ? credentials.map((name: string) => [name, parentEnv[name]])
    : Object.entries(credentials);
  for (const [name, value] of named) {
    if (value !== undefined && value !== '') env[name] = value;
  }
  return env;
}

// HOME and the XDG roots for one session home.
function sandboxVars(home: string): Record<string, string> {
  const vars: Record<string, string> = { HOME: home };
  for (const [name, relative] of Object.entries(SESSION_XDG_DIRS)) vars[name] = path.join(home, relative);
  return vars;
}
