import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

/**
 * A tiny MCP server over stdio (newline-delimited JSON-RPC 2.0), written by hand because
 * `@modelcontextprotocol/sdk` is not a dependency. It answers `initialize`, `ping`,
 * `tools/list` (one tool, `echo`) and `tools/call`, ignores notifications, and answers any
 * other request with -32601. Run it as `node --import <tsx loader> stdio-mcp-server.ts`.
 *
 * Environment: MCP_SERVER_NAME (serverInfo.name, default "tiny"); MCP_STARTED_FILE, when set,
 * gets one line `<name> <pid>` appended at start, so a test can tell whether a client started it.
 * The process exits when stdin ends.
 */

const name = process.env.MCP_SERVER_NAME ?? 'tiny';
const startedFile = process.env.MCP_STARTED_FILE;
if (startedFile) appendFileSync(startedFile, `${name} ${process.pid}\n`);

interface Request {
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
}

const ECHO_TOOL = {
  name: 'echo',
  description: 'Returns its text argument unchanged.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
};

function answer(request: Request): unknown {
  switch (request.method) {
    case 'initialize':
      return {
        protocolVersion: typeof request.params?.protocolVersion === 'string' ? request.params.protocolVersion : '2024-11-05',
        capabilities: { tools: {} },
        serverInfo: { name, version: '0.0.1' },
      };
    case 'ping':
      return {};
    case 'tools/list':
      return { tools: [ECHO_TOOL] };
    case 'tools/call': {
      const args = request.params?.arguments as { text?: unknown } | undefined;
      return { content: [{ type: 'text', text: String(args?.text ?? '') }] };
    }
    default:
      return undefined;
  }
}

function send(message: unknown): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

createInterface({ input: process.stdin, crlfDelay: Infinity })
  .on('line', (line) => {
    if (line.trim() === '') return;
    let request: Request;
    try {
      request = JSON.parse(line) as Request;
    } catch {
      send({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    if (request.id === undefined || request.id === null) return; // a notification
    const result = answer(request);
    if (result === undefined)
      send({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: `Method not found: ${request.method}` } });
    else send({ jsonrpc: '2.0', id: request.id, result });
  })
  .on('close', () => process.exit(0));
