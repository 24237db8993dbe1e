import { ADAPTER_CONTRACT_VERSION, type Adapter, type ProbeResult } from '../../core/adapter.js';
import { claudeCatalog } from './catalog.js';
import { type ClaudeConfig, ClaudeConfigSchema } from './config.js';
import { CLAUDE_ASK_TOOLS } from './launch.js';
import { probeClaude } from './probe.js';
import { ClaudeSession } from './session.js';
import { CLAUDE_CLI, checkClaudeFacts } from './versions.js';

const CREDENTIALS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'] as const;

/** The Claude Code adapter: `claude -p` over its stream-json control protocol. */
export const claudeCodeAdapter: Adapter<ClaudeConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'claude-code',
  configSchema: ClaudeConfigSchema,
  cli: CLAUDE_CLI,
  checkVersionFacts: checkClaudeFacts,
  capabilities: {
    resume: 'respawn',
    // The model changes in the running process (set_model); a new effort restarts it (canApplySettings).
    perTurnSettings: true,
    steering: false,
    titles: false,
    authoritativeCatalog: false,
    oneTurnPerProcess: false,
  },
  prepare: (config, ctx) => ctx.services.resolveCli(config.cli, CLAUDE_CLI, ctx),
  open: (config, spec, io) => new ClaudeSession(config, spec, io),
  probe: (config, cli, launch, workdir): Promise<ProbeResult> => probeClaude(config, cli, launch, workdir),
  diagnose: (config) => [
    ...CREDENTIALS.map((name) =>
      config.credentials[name]
        ? { name: `claude-code ${name}`, ok: true, detail: 'present (not shown)' }
        : { name: `claude-code ${name}`, ok: true, warn: true, detail: 'not set' },
    ),
    config.endpoint
      ? { name: 'claude-code endpoint', ok: true, detail: `${config.endpoint.baseUrl} (key not shown)` }
      : { name: 'claude-code endpoint', ok: true, detail: 'Anthropic default' },
    ...ignoredAllowedTools(config).map((entry) => ({
      name: 'claude-code allowedTools',
      ok: true,
      warn: true,
      config: true,
      detail: `'${entry}' has no effect: the permission policy decides every ${entry.split('(')[0]} call (use policy.allow for commands)`,
    })),
  ],
  catalog: claudeCatalog,
};

// allowedTools entries for tools the adapter makes ask on every call (their ask rules win).
function ignoredAllowedTools(config: ClaudeConfig): string[] {
  return config.allowedTools.filter((entry) => (CLAUDE_ASK_TOOLS as readonly string[]).includes(entry.split('(')[0]!.trim()));
}

export { ClaudeConfigSchema } from './config.js';
export type { ClaudeConfig } from './config.js';
