import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { watchAsksForElicitation, type ElicitationWatcher } from './elicitation.js';
import { startMcpHttpServer } from './http-server.js';
import type { ListenAddress } from './http-options.js';
import { createMcpServer, type McpServerOptions } from './mcp-server.js';

/**
 * Serves MCP over this process's stdin/stdout until stdin ends or `signal` aborts. Only
 * protocol messages go to stdout; logs go through `options.log` (stderr).
 */
export async function serveStdio(options: McpServerOptions, signal: AbortSignal): Promise<void> {
  // Elicitations go to this one client for the sessions its tool calls created or named.
  let watcher: ElicitationWatcher | undefined;
  const server = createMcpServer({
    ...options,
    onSessions: (ids) => {
      for (const id of ids) watcher?.track(id);
      options.onSessions?.(ids);
    },
  });
  watcher = watchAsksForElicitation(server, options.orchestrator, options.log);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    // The SDK's stdio transport does not watch for the end of stdin; the client closing it ends the session.
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await server.connect(transport);
  options.log('serving MCP on stdio');
  try {
    await closed;
  } finally {
    watcher.close();
    await server.close().catch(() => undefined);
  }
}

export interface HttpServeOptions extends McpServerOptions {
  address: ListenAddress;
  token: string;
  allowOrigins: readonly string[];
}

/** Serves MCP over authenticated Streamable HTTP (see http-server.ts) until `signal` aborts. */
export async function serveHttp(options: HttpServeOptions, signal: AbortSignal): Promise<void> {
  const http = await startMcpHttpServer({
    address: options.address,
    token: options.token,
    allowOrigins: options.allowOrigins,
    createServer: () => createMcpServer(options),
    log: options.log,
  });
  options.log(`serving MCP on ${http.url} (bearer token required)`);
  try {
    await new Promise<void>((resolve) => {
      if (signal.aborted) resolve();
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    await http.close();
  }
}
