import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, ONE_WORKS_BIN } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { until } from './orchestrator-rig.js';
import { adviceFor } from '../../cli/mcp/tool-errors.js';
import {
  MCP_RIG_DROID,
  MCP_RIG_ORCHESTRATOR,
  MCP_SCRIPT,
  exerciseTools,
  expectReaped,
  nativeIds,
  stopOrchestrator,
} from './mcp-e2e-support.js';

// `one-works mcp` over stdio, driven by the real MCP SDK client, with the real droid and a
// scripted model behind the orchestrator the MCP server auto-starts.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('one-works mcp over stdio with the real droid', () => {
  it('creates, waits, reads, sends, finds, archives and cancels sessions; replays a request key, refuses a conflict; runs sessions in parallel; never shows native ids', async () => {
    const model = await rigs.model({ steps: MCP_SCRIPT });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: MCP_RIG_DROID, orchestrator: MCP_RIG_ORCHESTRATOR });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
      cwd: rig.root,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const client = new Client({ name: 'conformance', version: '0' });
    await client.connect(transport);
    const mcpPid = transport.pid!;
    try {
      const seen = await exerciseTools(client, rig);
      const natives = await nativeIds(rig);
      expect(natives.length).toBeGreaterThan(0);
      const text = JSON.stringify(seen);
      for (const native of natives) expect(text).not.toContain(native);
      expect(text).not.toContain('sk-rig-secret');
    } finally {
      await client.close();
    }
    // Closing stdin ends the MCP server; the orchestrator it started is stopped like a user would.
    await expectReaped(mcpPid);
    await stopOrchestrator(rig.stateDir);
    expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
    expect(stderr).toContain('serving MCP on stdio');
    expect(stderr).not.toContain('sk-rig-secret');
  });

  it('writes nothing but protocol messages to stdout, even while it auto-starts the orchestrator', async () => {
    const model = await rigs.model({ steps: MCP_SCRIPT });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const child = spawn(process.execPath, [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'], {
      cwd: rig.root,
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const send = (message: object): boolean => child.stdin.write(`${JSON.stringify(message)}\n`);
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_workspaces', arguments: {} } });
    send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'session_status', arguments: { session: 's-0000000000' } } });
    await until(() => stdout.split('\n').filter((line) => line.includes('"id":3')).length > 0);
    child.stdin.end();
    expect(await exited, stderr).toBe(0);
    const lines = stdout.split('\n').filter((line) => line !== '');
    const messages = lines.map((line) => JSON.parse(line) as { jsonrpc: string; id?: number; result?: { structuredContent?: unknown } });
    expect(messages.every((m) => m.jsonrpc === '2.0')).toBe(true);
    expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(messages[1]?.result?.structuredContent).toMatchObject({ approvedRoots: [rig.workspace] });
    expect(messages[2]?.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'session_not_found' } } });
    await stopOrchestrator(rig.stateDir);
  });

  it('refuses, with orchestrator_mismatch and its action, to use a `one-works serve` started with another environment', async () => {
    const model = await rigs.model({ steps: [{ text: 'never asked' }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const server = rig.start(['serve'], { env: { LANG: 'C' } });
    await until(() => existsSync(join(rig.stateDir, 'orchestrator.sock')));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome, LANG: 'C.UTF-8' },
      cwd: rig.root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'conformance', version: '0' });
    await client.connect(transport);
    const mcpPid = transport.pid!;
    try {
      const result = await client.callTool({ name: 'create_session', arguments: { workspace: rig.workspace, prompt: 'hello' } });
      expect(result.isError).toBe(true);
      const { error } = result.structuredContent as { error: { code: string; message: string; action: string } };
      expect(error).toMatchObject({ code: 'orchestrator_mismatch', action: adviceFor('orchestrator_mismatch').action });
      expect(error.message).toContain(`kill -TERM ${server.pid}`);
      expect(JSON.stringify(result.content)).toContain(adviceFor('orchestrator_mismatch').action);
    } finally {
      await client.close();
    }
    await expectReaped(mcpPid);
    expect(await rig.sessionIds()).toEqual([]);
    expect(model.requests).toEqual([]);
    server.kill('SIGTERM');
    expect((await server.result).exitCode).toBe(0);
  });
});
