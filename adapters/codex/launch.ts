import path from 'node:path';
import type { LaunchSpec, ResolvedCli, SeedFile } from '../../core/adapter.js';
import type { CodexConfig } from './config.js';
import { codexHelperPathDir } from './versions.js';

/** Where Codex keeps its state inside the session HOME: CODEX_HOME, and a TMPDIR beside it (not above it). */
export const CODEX_HOME_DIRS = { home: '.codex', tmp: '.codex-tmp' } as const;

/** The provider id of a BYOK endpoint in the generated config.toml. */
export const CODEX_BYOK_PROVIDER = 'one-works';

/** The variable the BYOK endpoint's key reaches Codex through (`env_key` of the provider); never written to disk. */
export const CODEX_BYOK_KEY_ENV = 'ONE_WORKS_CODEX_API_KEY';

export interface CodexLaunchOptions {
  cwd: string;
  home: string;
  /** Host environment `passEnv` names are read from. */
  hostEnv: Readonly<Record<string, string | undefined>>;
}

// A TOML basic string: JSON's escapes are TOML's for the characters JSON escapes.
const toml = (value: string): string => JSON.stringify(value);

/**
 * The `$CODEX_HOME/config.toml` One Works writes for every session (Codex 0.171.0, every key
 * accepted by `--strict-config`): no update check, analytics, feedback or OpenTelemetry, and the
 * `plugins` feature off (with it on, Codex looks up github.com, api.github.com and chatgpt.com
 * even with the others off; other-agents.md §2). With an endpoint, a model provider speaking the
 * Responses wire API at its base URL, its key read from {@link CODEX_BYOK_KEY_ENV}, no retries.
 * Commands Codex runs do not inherit credentials: variables named like keys, tokens or secrets
 * stay behind (`shell_environment_policy`). No secret is ever written here.
 */
export function codexConfigToml(config: CodexConfig, workspace?: string): string {
  const lines: string[] = ['# Written by One Works for this session; rewritten at every start.', 'check_for_update_on_startup = false'];
  if (config.model !== 'inherit') lines.push(`model = ${toml(config.model)}`);
  if (config.effort) lines.push(`model_reasoning_effort = ${toml(config.effort)}`);
  if (config.endpoint) lines.push(`model_provider = ${toml(CODEX_BYOK_PROVIDER)}`);
  lines.push(
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[otel]',
    'exporter = "none"',
    'log_user_prompt = false',
    '',
    '[features]',
    'plugins = false',
    '',
    '[shell_environment_policy]',
    'inherit = "all"',
    'ignore_default_excludes = false',
    `exclude = ["*KEY*", "*TOKEN*", "*SECRET*", ${toml(CODEX_BYOK_KEY_ENV)}]`,
  );
  if (config.endpoint) {
    lines.push(
      '',
      `[model_providers.${CODEX_BYOK_PROVIDER}]`,
      'name = "One Works endpoint"',
      `base_url = ${toml(config.endpoint.baseUrl.replace(/\/+$/, ''))}`,
      `env_key = ${toml(CODEX_BYOK_KEY_ENV)}`,
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
    );
  }
  // The workspace's own `.codex/` (its exec-policy rules, e.g. `prefix_rule(…, decision="allow")`,
  // and its config) would let commands run without asking One Works: Codex 0.171.0 reads them
  // unless the project is untrusted. The workspace and every folder above it are.
  if (workspace) {
    for (let dir = path.resolve(workspace); ; dir = path.dirname(dir)) {
      lines.push('', `[projects.${toml(dir)}]`, 'trust_level = "untrusted"');
      if (path.dirname(dir) === dir) break;
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The files seeded into the session HOME before each start: config.toml (the workspace untrusted), and the TMPDIR (a keep file makes it). */
export function codexSeedFiles(config: CodexConfig, workspace?: string): SeedFile[] {
  return [
    { path: `${CODEX_HOME_DIRS.home}/config.toml`, content: codexConfigToml(config, workspace) },
    { path: `${CODEX_HOME_DIRS.tmp}/.keep`, content: '' },
  ];
}

/**
 * How codex is started: `codex app-server` (JSON-RPC over stdio), CODEX_HOME inside the session
 * HOME and a per-session TMPDIR beside it (Codex refuses to create its helper binaries when
 * CODEX_HOME is under the temp dir), the package's helper PATH directory (rg) first on PATH for
 * a managed install, credentials only those configured, the endpoint's key in its own variable.
 */
export function describeCodexLaunch(config: CodexConfig, cli: ResolvedCli, options: CodexLaunchOptions): LaunchSpec {
  const credentials: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.credentials)) if (value) credentials[name] = value;
  const passed: Record<string, string> = {};
  for (const name of config.passEnv) {
    const value = options.hostEnv[name];
    if (value) passed[name] = value;
  }
  const helpers = codexHelperPathDir(cli.binaryPath);
  const hostPath = options.hostEnv.PATH ?? '';
  return {
    command: cli.binaryPath,
    args: ['app-server'],
    cwd: options.cwd,
    env: {
      ...passed,
      ...config.env,
      ...credentials,
      ...(config.endpoint ? { [CODEX_BYOK_KEY_ENV]: config.endpoint.apiKey } : {}),
      ...(helpers ? { PATH: hostPath ? `${helpers}${path.delimiter}${hostPath}` : helpers } : {}),
      CODEX_HOME: path.join(options.home, CODEX_HOME_DIRS.home),
      TMPDIR: path.join(options.home, CODEX_HOME_DIRS.tmp),
    },
    secrets: [...Object.values(credentials), ...(config.endpoint ? [config.endpoint.apiKey] : [])],
  };
}
