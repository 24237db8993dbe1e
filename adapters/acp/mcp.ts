import type * as acp from '@agentclientprotocol/sdk';
import { OneWorksError } from '../../core/errors.js';
import type { AcpMcpServer } from './config.js';

/**
 * The configured MCP servers in ACP's `session/new` shape (env and headers as name/value lists),
 * and their secret values (env and header values) for the redactor.
 */
export function acpMcpServers(servers: Readonly<Record<string, AcpMcpServer>>): { servers: acp.McpServer[]; secrets: string[] } {
  const pairs = (record: Readonly<Record<string, string>>) => Object.entries(record).map(([name, value]) => ({ name, value }));
  const out: acp.McpServer[] = [];
  const secrets: string[] = [];
  for (const [name, server] of Object.entries(servers)) {
    if (server.type === 'stdio') {
      out.push({ name, command: server.command!, args: server.args, env: pairs(server.env) });
      secrets.push(...Object.values(server.env));
    } else {
      out.push({ type: server.type, name, url: server.url!, headers: pairs(server.headers) });
      secrets.push(...Object.values(server.headers));
    }
  }
  return { servers: out, secrets };
}

/**
 * Remote servers need the agent's `mcpCapabilities.http` / `.sse` (ACP: a client must not send
 * them otherwise): refused before `session/new` with the names, rather than dropped silently.
 */
export function checkMcpTransports(
  agent: string,
  servers: readonly acp.McpServer[],
  capabilities: { http?: boolean; sse?: boolean } | null | undefined,
): void {
  const unsupported = servers.flatMap((server) =>
    'type' in server && (server.type === 'http' || server.type === 'sse') && capabilities?.[server.type] !== true
      ? [`${server.name} (${server.type})`]
      : [],
  );
  if (unsupported.length > 0) {
    throw new OneWorksError(
      'config_invalid',
      `${agent} does not accept these MCP servers' transport (its mcpCapabilities): ${unsupported.join(', ')}; use a stdio server or remove them`,
    );
  }
}
