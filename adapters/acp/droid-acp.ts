import { z } from 'zod';
import { lazySchema } from '../../core/lazy-schema.js';
import {
  ADAPTER_CONTRACT_VERSION,
  type Adapter,
  type LaunchSpec,
  type ProbeResult,
  type SeedFile,
  type SessionSpec,
} from '../../core/adapter.js';
import { DROID_CLI } from '../droid/cli-source.js';
import { type DroidConfig, DroidConfigSchema } from '../droid/config.js';
import { configuredCredentials } from '../droid/launch.js';
import { workspaceAllowlist } from '../droid/native-permissions.js';
import { composeDroidSettings, droidSettingsEnv } from '../droid/settings.js';
import { DroidAcpBlockSchema } from './config.js';
import { probeAcp } from './probe.js';
import { ACP_FACTS, type AcpAgentProfile, AcpSession, checkAcpFacts } from './session.js';

/** What the droid-acp adapter is given: the droid block, enabled. */
export const DroidAcpConfigSchema = lazySchema(() =>
  DroidConfigSchema._zod.innerType.extend({
    enabled: z.boolean().default(true).describe('Use droid in ACP mode.'),
  }),
);
export type DroidAcpConfig = z.output<typeof DroidAcpConfigSchema>;

/** The session mode in which droid asks before every call that is not read-only ("Auto (Off)"). */
const DROID_ASKING_MODE = 'normal';

/** The ACP launch of droid: `droid exec --output-format acp`, isolated like the stream-jsonrpc adapter. */
export function describeDroidAcp(
  config: DroidConfig,
  spec: Pick<SessionSpec, 'workspace' | 'home'>,
  cliPath: string,
): { launch: LaunchSpec; seed: SeedFile[] } {
  // Commands the workspace's own droid settings allow would run unasked: droid is told to ask.
  const settings = composeDroidSettings(config, { alsoDenied: workspaceAllowlist(spec.workspace) });
  const credentials = configuredCredentials(config);
  return {
    launch: {
      command: cliPath,
      args: ['exec', '--output-format', 'acp', '--cwd', spec.workspace],
      cwd: spec.workspace,
      env: {
        ...config.env,
        ...credentials,
        ...settings.env,
        ...droidSettingsEnv(spec.home),
        DROID_DISABLE_AUTO_UPDATE: 'true',
        FACTORY_DROID_AUTO_UPDATE_ENABLED: 'false',
      },
      secrets: [...Object.values(credentials), ...settings.secrets],
    },
    seed: settings.files,
  };
}

function droidProfile(config: DroidAcpConfig): AcpAgentProfile {
  return {
    adapter: 'droid-acp',
    agent: 'droid (ACP)',
    launch: (spec) => describeDroidAcp(config, spec, spec.cli.binaryPath),
    // droid's MCP servers come from the session's .factory/mcp.json (composed from the YAML), as in the stream-jsonrpc adapter.
    mcpServers: [],
    askingMode: DROID_ASKING_MODE,
    startupTimeoutMs: config.startupTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
  };
}

/** droid's own ACP mode: the managed droid binary as an ACP agent over stdio. */
export const droidAcpAdapter: Adapter<DroidAcpConfig> = {
  contractVersion: ADAPTER_CONTRACT_VERSION,
  name: 'droid-acp',
  configSchema: DroidAcpConfigSchema,
  cli: DROID_CLI,
  checkVersionFacts: checkAcpFacts,
  capabilities: {
    resume: 'load',
    perTurnSettings: false,
    steering: false,
    titles: false,
    authoritativeCatalog: false,
    oneTurnPerProcess: false,
  },
  async prepare(config, ctx) {
    const cli = await ctx.services.resolveCli(config.cli, DROID_CLI, { ...ctx, lock: new Map() });
    // The same binary; its ACP mode announces ACP protocol version 1 (observed on 0.225.2).
    return { ...cli, expected: { facts: ACP_FACTS, qualifiedBy: 'table' } };
  },
  open: (config, spec, io) => new AcpSession(droidProfile(config), spec, io),
  probe: (config, cli, launch, workdir): Promise<ProbeResult> =>
    probeAcp(
      'droid (ACP)',
      cli,
      launch,
      () => {
        const bare = { ...config, credentials: {}, customModels: [], mcpServers: {}, hooks: {}, skills: [] };
        const { launch: spec, seed } = describeDroidAcp(bare, { workspace: workdir, home: workdir }, cli.binaryPath);
        // The throwaway launcher owns HOME: the managed settings path would point at the workdir.
        const { FACTORY_ORG_MANAGED_SETTINGS_LOCAL_PATH: _managed, ...env } = spec.env;
        return { launch: { ...spec, env, secrets: [] }, seed };
      },
      config.startupTimeoutMs,
    ),
  diagnose: (config) => [
    {
      name: 'droid-acp settings',
      ok: true,
      warn: config.systemPrompt !== undefined || config.rules.length > 0 || config.disableBuiltinSkills,
      config: true,
      detail:
        config.systemPrompt !== undefined || config.rules.length > 0 || config.disableBuiltinSkills
          ? 'droid ACP mode has no session parameters: systemPrompt, rules and disableBuiltinSkills of adapters.droid are not applied'
          : 'uses the adapters.droid block (CLI, model, customModels, env, credentials, MCP servers)',
    },
  ],
};

export { DroidAcpBlockSchema };
