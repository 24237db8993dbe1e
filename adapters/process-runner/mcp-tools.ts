import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport as McpTransport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { ChildChannel, SessionIO } from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { HarnessMcpServer } from './config.js';
import type { HarnessTool, ToolOutcome } from './tools.js';

/**
 * MCP servers as harness tools. One Works is their MCP client (`@modelcontextprotocol/sdk`): it
 * starts each configured stdio server through the session's launcher (sandbox, allowlisted
 * environment, session HOME, its own process group, secrets registered), lists its tools and
 * offers them to the runner as `<server>__<tool>`. A call is validated against the tool's input
 * schema, decided by the policy with the server's declared `kind` (session.ts), and made by One
 * Works; the runner never starts a server. The servers live as long as the runner process.
 */

/** Separates the server from the tool in the name the runner sees. */
export const MCP_TOOL_SEPARATOR = '__';

const MAX_OUTPUT_CHARS = 64 * 1024;

/** The running servers of one runner process and their tools. */
export interface McpTools {
  tools: HarnessTool[];
  /** Closes every client and stops every server (bounded by the launcher's stop). */
  close(): Promise<void>;
}

/** Starts `servers`; rejects (after stopping those already started) when one fails to start or list its tools. */
export async function startMcpTools(
  adapterName: string,
  servers: Readonly<Record<string, HarnessMcpServer>>,
  io: SessionIO,
  cwd: string,
): Promise<McpTools> {
  // The MCP SDK (some 800 zod schemas) is loaded when a harness declares MCP servers, not with the adapter.
  const { Client: McpClient } = await import('@modelcontextprotocol/sdk/client/index.js');
  const running: Array<{ client: Client; child: ChildChannel }> = [];
  const close = async (): Promise<void> => {
    await Promise.all(
      running.splice(0).map(async ({ client, child }) => {
        await client.close().catch(() => undefined);
        await child.stop('shutdown').catch(() => undefined);
      }),
    );
  };
  const tools: HarnessTool[] = [];
  try {
    for (const [name, server] of Object.entries(servers)) {
      const child = await io.launch(
        {
          command: server.command,
          args: [...server.args],
          cwd,
          env: { ...server.env },
          secrets: Object.values(server.env),
          readOnly: server.args.filter((arg) => arg.startsWith('/')),
        },
        [],
      );
      const client = new McpClient({ name: 'one-works', version: '1' }, { capabilities: {} });
      running.push({ client, child });
      try {
        await client.connect(new ChildTransport(child), { timeout: server.startupTimeoutMs });
        const listed = await client.listTools(undefined, { timeout: server.startupTimeoutMs });
        for (const tool of listed.tools) tools.push(mcpTool(name, server, client, tool));
      } catch (error) {
        const tail = child.stderrTail().trim();
        const why = io.redactor.redact(error instanceof Error ? error.message : String(error));
        throw new OneWorksError(
          'peer_error',
          `${adapterName}: MCP server ${JSON.stringify(name)} did not start (${why})${tail ? `; stderr: ${io.redactor.redact(tail).slice(-300)}` : ''}`,
        );
      }
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { tools, close };
}

function mcpTool(
  server: string,
  config: HarnessMcpServer,
  client: Client,
  tool: { name: string; description?: string | undefined; inputSchema: Record<string, unknown> },
): HarnessTool {
  const name = `${server}${MCP_TOOL_SEPARATOR}${tool.name}`;
  let schema: z.ZodType;
  try {
    schema = z.fromJSONSchema(tool.inputSchema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch {
    // A schema zod cannot read: the server validates the arguments itself.
    schema = z.record(z.string(), z.unknown());
  }
  return {
    name,
    kind: config.kind,
    description: tool.description ?? `${tool.name} (MCP server ${server})`,
    schema,
    inputSchema: tool.inputSchema,
    facts: () => ({ label: `mcp: ${server}/${tool.name}` }),
    run: async (args, ctx): Promise<ToolOutcome> => {
      const result = await client.callTool({ name: tool.name, arguments: args as Record<string, unknown> }, undefined, {
        signal: ctx.signal,
        timeout: config.callTimeoutMs,
      });
      const parts = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
      const text = parts
        .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : `[${String(part.type)} content]`))
        .join('\n');
      const content = text.length > MAX_OUTPUT_CHARS ? `${text.slice(0, MAX_OUTPUT_CHARS)}\n… (truncated)` : text;
      return { content, isError: result.isError === true };
    },
  };
}

// The MCP SDK's transport over a child the session's launcher started (NDJSON on its stdio).
class ChildTransport implements McpTransport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #child: ChildChannel;

  constructor(child: ChildChannel) {
    this.#child = child;
  }

  async start(): Promise<void> {
    const transport = this.#child.transport;
    transport.onmessage = (message) => this.onmessage?.(message as JSONRPCMessage);
    transport.onerror = (error) => this.onerror?.(error);
    transport.onclose = () => this.onclose?.();
    await transport.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#child.transport.send(message);
  }

  close(): Promise<void> {
    return this.#child.transport.close();
  }
}
