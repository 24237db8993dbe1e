import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createMcpServer } from '../../../cli/mcp/mcp-server.js';
import { FakeOrchestrator } from './fake-orchestrator.js';

/** A real SDK client connected in memory to the One Works MCP server over a fake orchestrator. */
export async function connectFake(
  redact: (text: string) => string = (t) => t,
): Promise<{ client: Client; fake: FakeOrchestrator; logs: string[]; close(): Promise<void> }> {
  const fake = new FakeOrchestrator();
  const logs: string[] = [];
  const server = createMcpServer({
    orchestrator: { use: (call) => call(fake) },
    version: '0.0.0-test',
    redact,
    log: (line) => logs.push(line),
  });
  const client = new Client({ name: 'test', version: '0.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  // Listing caches the output schemas, so the client checks every structuredContent against them.
  await client.listTools();
  return {
    client,
    fake,
    logs,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}
