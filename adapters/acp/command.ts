import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { ADAPTER_CONTRACT_VERSION, type Adapter, type ProbeResult, type ResolvedCli } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import { type AcpAgent, type AcpConfig, AcpConfigSchema, acpAgentName } from './config.js';
import { acpMcpServers } from './mcp.js';
import { probeAcp } from './probe.js';
import { ACP_FACTS, type AcpAgentProfile, AcpSession, checkAcpFacts } from './session.js';

/** The version recorded for an agent by command (not pinned, not known before it runs). */
export const UNPINNED_VERSION = '0.0.0';

function agentOf(config: AcpConfig, name: string): AcpAgent {
  const agent = config.agents[name];
  if (!agent) {
    const known = Object.keys(config.agents);
    throw new OneWorksError(
      'usage',
      `no ACP agent "${name}" in adapters.acp.agents${known.length > 0 ? ` (declared: ${known.join(', ')})` : ''}`,
    );
  }
  return agent;
}

// The executable's absolute path: as given, or the first executable of that name on PATH.
function locate(command: string, env: NodeJS.ProcessEnv): string | undefined {
  const executable = (path: string): boolean => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (isAbsolute(command)) return executable(command) ? command : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && executable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

function profile(name: string, config: AcpConfig, agent: AcpAgent): AcpAgentProfile {
  return {
    adapter: `acp:${name}`,
    agent: `ACP agent ${name}`,
    launch: (spec) => {
      const credentials: Record<string, string> = {};
      for (const variable of agent.credentials) {
        const value = process.env[variable];
        if (value) credentials[variable] = value;
      }
      return {
        launch: {
          command: spec.cli.binaryPath,
          args: agent.args,
          cwd: spec.workspace,
          env: { ...agent.env, ...credentials },
          secrets: [...Object.values(credentials), ...acpMcpServers(agent.mcpServers).secrets],
        },
        seed: [],
      };
    },
    mcpServers: acpMcpServers(agent.mcpServers).servers,
    ...(agent.authMethod ? { authMethod: agent.authMethod } : {}),
    startupTimeoutMs: config.startupTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
  };
}

/**
 * The adapter of one ACP agent declared by command (`acp:<name>`). One Works knows nothing about
 * such an agent beyond the protocol: it cannot pin or install it, does not know where it keeps
 * state outside HOME and the XDG roots, nor whether it asks before every tool call; the docs
 * say so.
 */
export function acpCommandAdapter(name: string): Adapter<AcpConfig> {
  return {
    contractVersion: ADAPTER_CONTRACT_VERSION,
    name: `acp:${name}`,
    configSchema: AcpConfigSchema,
    checkVersionFacts: checkAcpFacts,
    capabilities: {
      resume: 'load',
      perTurnSettings: false,
      steering: false,
      titles: false,
      authoritativeCatalog: false,
      oneTurnPerProcess: false,
    },
    async prepare(config): Promise<ResolvedCli> {
      const agent = agentOf(config, name);
      const binaryPath = locate(agent.command, process.env);
      if (!binaryPath) {
        throw new OneWorksError(
          'cli_not_found',
          `ACP agent ${name}: ${agent.command} is not an executable${isAbsolute(agent.command) ? '' : ' on PATH'} (adapters.acp.agents.${name}.command)`,
        );
      }
      // An agent by command is not pinned: One Works cannot know its version before it runs, so
      // it is recorded as 0.0.0 with the range `*`; what One Works expects of it is ACP v1.
      return {
        source: 'path',
        binaryPath,
        version: UNPINNED_VERSION,
        range: '*',
        expected: { facts: ACP_FACTS, qualifiedBy: 'table' },
      };
    },
    open: (config, spec, io) => new AcpSession(profile(name, config, agentOf(config, name)), spec, io),
    probe: (config, cli, launch, workdir): Promise<ProbeResult> =>
      probeAcp(
        `ACP agent ${name}`,
        cli,
        launch,
        () => {
          const described = profile(name, config, { ...agentOf(config, name), credentials: [] }).launch({
            sessionId: 'probe',
            workspace: workdir,
            home: workdir,
            cli,
            nativeSessionId: undefined,
            model: undefined,
            effort: undefined,
            autonomy: 'low',
            title: undefined,
          });
          return described;
        },
        config.startupTimeoutMs,
      ),
    diagnose: (config) => {
      const agent = config.agents[name];
      if (!agent) return [{ name: `acp:${name}`, ok: false, config: true, detail: `no adapters.acp.agents.${name}` }];
      const found = locate(agent.command, process.env);
      return [
        {
          name: `acp:${name} command`,
          ok: found !== undefined,
          config: true,
          detail: found ?? `${agent.command} not found or not executable`,
        },
        ...agent.credentials.map((variable) =>
          process.env[variable]
            ? { name: `acp:${name} ${variable}`, ok: true, detail: 'present (not shown)' }
            : { name: `acp:${name} ${variable}`, ok: true, warn: true, detail: 'not set' },
        ),
      ];
    },
  };
}

export { type AcpAgent, type AcpConfig, AcpConfigSchema, acpAgentName };
