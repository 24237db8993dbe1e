import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import type { SeedFile } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { DroidConfig, DroidMcpServer } from './config.js';
import { DROID_BUILTIN_ALLOWLIST, NATIVE_AUTONOMY } from './native-permissions.js';

/**
 * The isolated `.factory/` of one session, composed from the YAML: `settings.json` (BYOK
 * `customModels`, the model/effort defaults, droid's own autonomy `off` and the
 * `commandDenylist` that make droid ask before every call that is not read-only, native `hooks`,
 * the MCP policy, and `configContent` merged over all of it), the managed-level settings (the
 * MCP policy, the deny list and hooks again, see droidSettingsEnv), `mcp.json` (the YAML's MCP
 * servers) and a copy of each YAML skill directory under `skills/<name>/`. Cloud session sync stays off. The user's real
 * `~/.factory` is never read: these files are the only user-level settings droid finds.
 */
export interface ComposedSettings {
  files: SeedFile[];
  /**
   * Variables the launch must carry: BYOK api keys travel here, referenced from settings.json
   * as `${ONE_WORKS_BYOK_KEY_<n>}` (droid expands such references in `apiKey`), so the key is
   * never written to disk by One Works.
   */
  env: Record<string, string>;
  /** Secrets that appear in the files (BYOK api keys, extra headers, MCP env and header values). */
  secrets: string[];
}

export interface ComposeOptions {
  /**
   * The token that admits the YAML's stdio MCP servers through droid's `mcpPolicy`; default: a
   * fresh random one per composition (so neither a workspace nor a stale `mcp.json` can know it).
   */
  mcpToken?: string;
  /**
   * `throwaway` (probes, catalog listings): leave out what acts on its own at start: hooks, MCP
   * servers and skills. Default `session`: everything.
   */
  scope?: 'session' | 'throwaway';
  /**
   * Commands added to droid's deny list (so that droid asks for them) besides its built-in
   * allowlist: the workspace's own `commandAllowlist` (see workspaceAllowlist). Default none.
   */
  alsoDenied?: readonly string[];
}

/** Prefix of the variables that carry BYOK api keys (see ComposedSettings.env). */
export const BYOK_KEY_VARIABLE = 'ONE_WORKS_BYOK_KEY_';

/** The variable through which `mcp.json` carries the MCP token on a stdio server's argv. */
export const MCP_TOKEN_VARIABLE = 'ONE_WORKS_MCP_TOKEN';

/** The settings One Works enforces over the workspace's, relative to HOME (see droidSettingsEnv). */
export const MANAGED_SETTINGS_PATH = '.factory/one-works-managed-settings.json';

/**
 * The environment the droid launch needs so that droid reads MANAGED_SETTINGS_PATH as its
 * org-managed settings level. `home` is the absolute session HOME. Without it, a workspace's own
 * `.factory/settings.json` can replace the MCP allowlist and add hooks (droid 0.225.2 lets an
 * enabled project-level mcpPolicy win over the user level); with it, the managed level wins and
 * `allowManagedHooksOnly` drops every hook but One Works' own. A host with a system-wide
 * `/etc/factory/settings.json` keeps that file as its managed level instead (droid's rule).
 */
export function droidSettingsEnv(home: string): Record<string, string> {
  return { FACTORY_ORG_MANAGED_SETTINGS_LOCAL_PATH: join(home, MANAGED_SETTINGS_PATH) };
}

/** Largest file copied from a skill directory, and largest skill directory, in bytes. */
export const MAX_SKILL_FILE_BYTES = 1024 * 1024;
export const MAX_SKILL_BYTES = 8 * 1024 * 1024;

/**
 * Composes the seed files. Reads the skill directories (synchronously, at session start);
 * throws OneWorksError('config_invalid') naming the path when one is missing, has no SKILL.md,
 * holds a symlink, a non-UTF-8 file or too many bytes.
 */
export function composeDroidSettings(config: DroidConfig, options: ComposeOptions = {}): ComposedSettings {
  const secrets: string[] = [];
  const env: Record<string, string> = {};
  const customModels = config.customModels.map((m, index) => {
    for (const v of Object.values(m.extraHeaders ?? {})) secrets.push(v);
    if (!m.apiKey) return dropUndefined({ ...m });
    secrets.push(m.apiKey);
    const variable = `${BYOK_KEY_VARIABLE}${index}`;
    env[variable] = m.apiKey;
    return dropUndefined({ ...m, apiKey: `\${${variable}}` });
  });
  const full = options.scope !== 'throwaway';
  const mcp = composeMcp(full ? config.mcpServers : {}, options.mcpToken ?? `one-works-mcp-${randomBytes(12).toString('hex')}`);
  secrets.push(...mcp.secrets);
  const hooks = full
    ? Object.fromEntries(Object.entries(config.hooks).filter(([, matchers]) => matchers !== undefined && matchers.length > 0))
    : {};
  const base: Record<string, unknown> = {
    cloudSessionSync: false,
    // droid 0.225.2 loads `<workspace>/.factory/mcp.json` implicitly and starts its servers; a
    // workspace is not trusted to run processes that way. An enabled policy blocks every server
    // (`blockedByPolicy: true`) except those its allowlist admits: the YAML's own (see composeMcp).
    mcpPolicy: { enabled: true, allowlist: mcp.allowlist },
    ...(customModels.length > 0 ? { customModels } : {}),
    ...(Object.keys(hooks).length > 0 ? { hooks } : {}),
    // droid asks before every call that is not read-only; One Works' policy decides (see native-permissions.ts).
    commandDenylist: [...new Set([...DROID_BUILTIN_ALLOWLIST, ...(options.alsoDenied ?? [])])],
    sessionDefaultSettings: dropUndefined({
      model: config.model === 'inherit' ? undefined : config.model,
      reasoningEffort: config.effort,
      autonomyLevel: NATIVE_AUTONOMY,
      interactionMode: 'auto',
    }),
  };
  const merged = deepMerge(base, config.configContent ?? {});
  // The same policy and hooks at the managed level (when droidSettingsEnv is in the launch):
  // there the workspace cannot override them, and only these hooks run (no duplicates).
  // The deny list too: droid unions deny lists across levels, so neither configContent nor a
  // workspace's settings can take a command off it.
  const managed = {
    mcpPolicy: base.mcpPolicy,
    commandDenylist: base.commandDenylist,
    allowManagedHooksOnly: true,
    ...(Object.keys(hooks).length > 0 ? { hooks } : {}),
  };
  return {
    files: [
      privateJson('.factory/settings.json', merged),
      privateJson(MANAGED_SETTINGS_PATH, managed),
      // Written even when empty, so servers a previous start declared do not linger.
      privateJson('.factory/mcp.json', { mcpServers: mcp.servers }),
      ...(full ? config.skills.flatMap((dir, index) => skillFiles(dir, index)) : []),
    ],
    secrets,
    env,
  };
}

interface ComposedMcp {
  servers: Record<string, Record<string, unknown>>;
  allowlist: string[];
  secrets: string[];
}

// droid 0.225.2's mcpPolicy allowlist is not by name: a stdio server passes when an entry
// (lowercased, non-alphanumerics dropped) is a substring of its command or of one argument; an
// http/sse server passes when its URL's host is an entry's host or a subdomain of it. So each
// stdio server runs as `/usr/bin/env ONE_WORKS_MCP_TOKEN=<token> <command> <args…>`, and the
// token is the allowlist entry: a workspace server passes only if it knows the token.
function composeMcp(declared: Record<string, DroidMcpServer>, token: string): ComposedMcp {
  const servers: ComposedMcp['servers'] = {};
  const hosts = new Set<string>();
  const secrets: string[] = [];
  let stdio = false;
  for (const [name, server] of Object.entries(declared)) {
    if (server.type === 'stdio') {
      stdio = true;
      secrets.push(...Object.values(server.env ?? {}));
      servers[name] = dropUndefined({
        type: 'stdio',
        command: '/usr/bin/env',
        args: [`${MCP_TOKEN_VARIABLE}=${token}`, server.command, ...(server.args ?? [])],
        env: server.env,
      });
    } else {
      secrets.push(...Object.values(server.headers ?? {}));
      hosts.add(new URL(server.url!).hostname);
      servers[name] = dropUndefined({ type: server.type, url: server.url, headers: server.headers });
    }
  }
  return { servers, allowlist: [...(stdio ? [token] : []), ...hosts], secrets: secrets.filter((s) => s.length > 0) };
}

// The files of one skill directory as seed files under `.factory/skills/<directory name>/`.
function skillFiles(dir: string, index: number): SeedFile[] {
  const where = `${dir} (adapters.droid.skills[${index}])`;
  const fail = (problem: string, cause?: unknown): never => {
    throw new OneWorksError('config_invalid', `skill directory ${where} ${problem}`, { data: { path: dir }, ...(cause ? { cause } : {}) });
  };
  let top: ReturnType<typeof lstatSync>;
  try {
    top = lstatSync(dir);
  } catch (error) {
    return fail(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, error);
  }
  if (!top.isDirectory()) fail('is not a directory');
  if (!lstatSync(join(dir, 'SKILL.md'), { throwIfNoEntry: false })?.isFile()) fail('has no SKILL.md file');
  const files: SeedFile[] = [];
  let total = 0;
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      const rel = relative(dir, path);
      if (entry.isDirectory()) walk(path);
      else if (!entry.isFile()) fail(`contains ${rel}, which is not a regular file (symlinks are not followed)`);
      else {
        const info = lstatSync(path);
        total += info.size;
        if (info.size > MAX_SKILL_FILE_BYTES || total > MAX_SKILL_BYTES) {
          fail(`is too large at ${rel} (at most ${MAX_SKILL_FILE_BYTES} bytes a file, ${MAX_SKILL_BYTES} in all)`);
        }
        const bytes = readFileSync(path);
        const content = bytes.toString('utf8');
        if (!Buffer.from(content, 'utf8').equals(bytes)) fail(`contains ${rel}, which is not UTF-8 text (only text files are copied)`);
        files.push({ path: `.factory/skills/${basename(dir)}/${rel}`, content, mode: info.mode & 0o100 ? 0o700 : 0o600 });
      }
    }
  };
  try {
    walk(dir);
  } catch (error) {
    if (error instanceof OneWorksError) throw error;
    fail(`cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, error);
  }
  return files;
}

function privateJson(path: string, value: unknown): SeedFile {
  return { path, content: `${JSON.stringify(value, null, 2)}\n`, mode: 0o600 };
}

// Plain-object deep merge: objects merge key by key, anything else (arrays included) is replaced.
export function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const prev = out[key];
    out[key] = isPlainObject(prev) && isPlainObject(value) ? deepMerge(prev, value) : value;
  }
  return out;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function dropUndefined<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
