import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

/**
 * A small stdio MCP server on the MCP SDK (McpServer + StdioServerTransport), for tests of
 * One Works as an MCP client. One tool, `note` `{text}`: it appends `<name>: <text>` to the
 * file NOTES_FILE (so a test can tell whether a call reached it) and answers `noted <text>`.
 * Environment: MCP_SERVER_NAME (default "notes"), NOTES_FILE (required). Run it as
 * `node --import <tsx loader> sdk-mcp-server.ts`; it exits when stdin ends.
 */

const name = process.env.MCP_SERVER_NAME ?? 'notes';
const notesFile = process.env.NOTES_FILE;
if (!notesFile) throw new Error('NOTES_FILE is required');

const server = new McpServer({ name, version: '0.0.1' });
server.registerTool('note', { description: 'Writes a note down.', inputSchema: { text: z.string().min(1) } }, ({ text }) => {
  appendFileSync(notesFile, `${name}: ${text}\n`);
  return { content: [{ type: 'text', text: `noted ${text}` }] };
});
await server.connect(new StdioServerTransport());
