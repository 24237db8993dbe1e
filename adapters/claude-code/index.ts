import { ADAPTER_CONTRACT_VERSION, type Adapter, type ProbeResult } from '../../core/adapter.js';
import { resolveCli } from '../../core/install/resolve-cli.js';
import { claudeCatalog } from './catalog.js';
import { type ClaudeConfig, ClaudeConfigSchema } from './config.js';
import { CLAUDE_ASK_TOOLS } from './launch.js';
import { probeClaude } from './probe.js';
import { ClaudeSession } from './session.js';
import { CLAUDE_API, claudeBinPath, claudePlatformPackage, detectMusl, lookupClaudeVersion, parseClaudeVersion } from './versions.js';

const CREDENTIALS = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'] as const;

/** The Claude Code adapter: `claude -p` over its stream-json control protocol. */
export const claudeCodeAdapter: Adapter<ClaudeConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'claude-code',
  configSchema: ClaudeConfigSchema,
  apiVersion: CLAUDE_API,
  capabilities: {
    resume: 'respawn',
    // The model changes in the running process (set_model); a new effort restarts it (canApplySettings).
    perTurnSettings: true,
    steering: false,
    titles: false,
    authoritativeCatalog: false,
    oneTurnPerProcess: false,
  },
  async prepare(config, ctx) {
    const located = await resolveCli(
      config.cli,
      {
        adapter: 'claude-code',
        executable: process.platform === 'win32' ? 'claude.exe' : 'claude',
        platformPackage: () => claudePlatformPackage(process.platform, process.arch, detectMusl()),
        binPath: claudeBinPath(process.platform),
        parseVersion: parseClaudeVersion,
      },
      {
        services: ctx.services,
        cacheDir: ctx.cacheDir,
        env: process.env,
        ...(ctx.onProgress ? { onProgress: ctx.onProgress } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        ...(ctx.install === undefined ? {} : { install: ctx.install }),
        ...(ctx.reuseVersionCheck ? { reuseVersionCheck: true } : {}),
      },
    );
    const table = lookupClaudeVersion(located.version);
    const locked = ctx.lock.get(located.version);
    return {
      source: config.cli.source,
      binaryPath: located.binaryPath,
      version: located.version,
      range: config.cli.range,
      // Claude Code announces only its own version (`claude_code_version`): that is its protocol fact.
      expected: table
        ? { apiVersion: CLAUDE_API, protocolVersion: located.version, qualifiedBy: 'table' }
        : locked
          ? { apiVersion: locked.apiVersion, protocolVersion: locked.protocolVersion, qualifiedBy: 'lock' }
          : undefined,
      ...(located.package ? { package: located.package } : {}),
    };
  },
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
