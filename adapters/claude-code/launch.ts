import path from 'node:path';
import type { LaunchSpec, ResolvedCli } from '../../core/adapter.js';
import type { ClaudeConfig } from './config.js';

/** Where Claude Code keeps its state inside the session HOME (CLAUDE_CONFIG_DIR and friends). */
export const CLAUDE_HOME_DIRS = { config: '.claude', tmp: '.claude-tmp', runtime: '.claude-run' } as const;

export interface ClaudeLaunchOptions {
  cwd: string;
  home: string;
  /** `--session-id` for a new conversation, or `--resume` for one a previous process created. */
  session: { mode: 'new' | 'resume'; id: string } | undefined;
  model: string | undefined;
  effort: string | undefined;
  /** Host environment `passEnv` names are read from. */
  hostEnv: Readonly<Record<string, string | undefined>>;
}

/**
 * The tools 2.1.333 is told to ask about on every call (`permissions.ask` in `--settings`): the
 * ones whose kind the policy decides (execute, edit, fetch). Without these rules it runs the
 * commands it judges read-only (`ls`, `cat`, …) and WebFetch of its preapproved hosts unasked,
 * so a `deny` entry could not stop them. An ask rule wins over every allow rule, including
 * `--allowedTools` and session rules (checked on 2.1.333).
 */
export const CLAUDE_ASK_TOOLS = ['Bash', 'Edit', 'Write', 'MultiEdit', 'NotebookEdit', 'WebFetch', 'WebSearch'] as const;

/**
 * How claude is started: print mode with stream-json both ways (2.1.333 needs --verbose for
 * that), permission prompts over stdio (`can_use_tool` control requests), partial messages for
 * live text, `--setting-sources user` (only the session's own CLAUDE_CONFIG_DIR settings: the
 * workspace's .claude/settings*.json and its hooks are not loaded) and `--strict-mcp-config`
 * (the workspace's .mcp.json is not loaded; only `mcpServers` from the YAML). Permission mode
 * `default` plus ask rules for {@link CLAUDE_ASK_TOOLS}: every command, write and fetch asks. State, temp files and the messaging socket stay
 * in the session HOME; nonessential traffic and the auto-updater are off.
 */
export function describeClaudeLaunch(config: ClaudeConfig, cli: ResolvedCli, options: ClaudeLaunchOptions): LaunchSpec {
  const args = [
    '-p',
    '--input-format',
    'stream-json',
    '--output-format',
    'stream-json',
    '--verbose',
    '--include-partial-messages',
    '--permission-prompt-tool',
    'stdio',
    '--permission-mode',
    'default',
    '--setting-sources',
    'user',
    '--strict-mcp-config',
    '--settings',
    JSON.stringify({ permissions: { ask: CLAUDE_ASK_TOOLS } }),
  ];
  if (options.session) args.push(options.session.mode === 'new' ? '--session-id' : '--resume', options.session.id);
  if (options.model && options.model !== 'inherit') args.push('--model', options.model);
  if (options.effort) args.push('--effort', options.effort);
  if (config.systemPrompt) args.push('--append-system-prompt', config.systemPrompt);
  if (config.allowedTools.length > 0) args.push('--allowedTools', config.allowedTools.join(','));
  if (config.disallowedTools.length > 0) args.push('--disallowedTools', config.disallowedTools.join(','));
  const secrets: string[] = [];
  if (Object.keys(config.mcpServers).length > 0) {
    args.push('--mcp-config', JSON.stringify({ mcpServers: config.mcpServers }));
    for (const server of Object.values(config.mcpServers))
      secrets.push(...Object.values(server.env ?? {}), ...Object.values(server.headers ?? {}));
  }
  const credentials: Record<string, string> = {};
  for (const [name, value] of Object.entries(config.credentials)) if (value) credentials[name] = value;
  const endpoint: Record<string, string> = config.endpoint
    ? { ANTHROPIC_BASE_URL: config.endpoint.baseUrl, ANTHROPIC_API_KEY: config.endpoint.apiKey }
    : {};
  const passed: Record<string, string> = {};
  for (const name of config.passEnv) {
    const value = options.hostEnv[name];
    if (value) passed[name] = value;
  }
  return {
    command: cli.binaryPath,
    args,
    cwd: options.cwd,
    env: {
      ...passed,
      ...config.env,
      ...credentials,
      ...endpoint,
      CLAUDE_CONFIG_DIR: path.join(options.home, CLAUDE_HOME_DIRS.config),
      CLAUDE_CODE_TMPDIR: path.join(options.home, CLAUDE_HOME_DIRS.tmp),
      XDG_RUNTIME_DIR: path.join(options.home, CLAUDE_HOME_DIRS.runtime),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
    secrets: [...Object.values(credentials), ...(config.endpoint ? [config.endpoint.apiKey] : []), ...secrets],
  };
}
