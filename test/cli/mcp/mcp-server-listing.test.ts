import { describe, expect, it, vi } from 'vitest';
import * as jsonSchema from '../../../cli/mcp/json-schema.js';
import { createMcpServer } from '../../../cli/mcp/mcp-server.js';
import { FakeOrchestrator } from './fake-orchestrator.js';

// The HTTP server makes an MCP server per request: the tools' JSON Schemas are built once.
vi.mock('../../../cli/mcp/json-schema.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../../cli/mcp/json-schema.js')>();
  return { ...actual, toolJsonSchema: vi.fn(actual.toolJsonSchema), advertisedOutputSchema: vi.fn(actual.advertisedOutputSchema) };
});

describe('createMcpServer', () => {
  it("does not rebuild the tools' JSON Schemas for each server it creates", async () => {
    const before = [vi.mocked(jsonSchema.toolJsonSchema).mock.calls.length, vi.mocked(jsonSchema.advertisedOutputSchema).mock.calls.length];
    const fake = new FakeOrchestrator();
    for (let i = 0; i < 5; i += 1) {
      const server = createMcpServer({ orchestrator: { use: (call) => call(fake) }, version: '0', redact: (t) => t, log: () => undefined });
      await server.close();
    }
    expect([
      vi.mocked(jsonSchema.toolJsonSchema).mock.calls.length,
      vi.mocked(jsonSchema.advertisedOutputSchema).mock.calls.length,
    ]).toEqual(before);
  });
});
