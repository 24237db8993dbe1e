import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import type { OpenAsk } from '../../core/permissions/index.js';
import { CliRigs, ONE_WORKS_BIN, type CliRig } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults, type Step } from '../support/scripted-model.js';
import { call, expectReaped, stopOrchestrator } from './mcp-e2e-support.js';
import { until } from './orchestrator-rig.js';

// Escalated asks answered over MCP, with the real droid 0.225.2 at autonomy low and `one-works
// mcp` on stdio driven by the real SDK client: once with the answer_ask tool, once through an
// elicitation the MCP server sends to the client that created the session.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TOOL_LINGER_MS = 10_000;
const COMMAND = 'echo hi > f.txt';

const askingExecute = (id: string): Step => ({
  toolCalls: [{ id, name: 'Execute', arguments: { command: COMMAND, riskLevel: 'high', riskLevelReason: 'writes a file' } }],
});
const echoToolResult: Step = (request) => ({ text: `Tool said: ${toolResults(request)[0]?.content.trim() ?? '(nothing)'}` });

// Starts `one-works mcp` for a rig and connects an SDK client with the given capabilities.
async function connectMcp(rig: CliRig, capabilities: ConstructorParameters<typeof Client>[1]): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
    env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
    cwd: rig.root,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', () => undefined);
  const client = new Client({ name: 'conformance-asks', version: '0' }, capabilities);
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

async function finish(rig: CliRig, client: Client, pid: number): Promise<void> {
  await client.close();
  await expectReaped(pid);
  // The orchestrator the MCP server started may already have exited idle (then its owner.json is gone).
  if (existsSync(join(rig.stateDir, 'owner.json'))) await stopOrchestrator(rig.stateDir).catch(() => undefined);
  expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
}

const decided = (events: RuntimeEvent[]) => events.filter((e) => e.type === 'permission.decided');

describe('asks answered over MCP (real droid, one-works mcp on stdio)', () => {
  it('lists the ask with list_asks and runs the tool once answer_ask allows it; a second answer is refused', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_mcp_answer'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { askTimeoutMs: 90_000 } });
    const { client, pid } = await connectMcp(rig, undefined);
    try {
      const handle = await call<{ sessionId: string }>(client, 'create_session', { workspace: rig.workspace, prompt: 'make a file' });
      let ask: OpenAsk | undefined;
      await until(async () => {
        ask = (await call<{ asks: OpenAsk[] }>(client, 'list_asks', { session: handle.sessionId })).asks[0];
        return ask !== undefined;
      });
      expect(ask).toMatchObject({ kind: 'tool', tools: [{ name: 'Execute', command: COMMAND }], reason: expect.any(String) });
      expect(await call(client, 'answer_ask', { ask: ask!.askId, choice: 'allow' })).toMatchObject({
        askId: ask!.askId,
        sessionId: handle.sessionId,
        decision: 'allow',
        channel: 'mcp',
      });
      const again = await client.callTool({ name: 'answer_ask', arguments: { ask: ask!.askId, choice: 'deny' } });
      expect(again.isError).toBe(true);
      expect(JSON.stringify(again.structuredContent)).toContain('ask_already_answered');
      expect(JSON.stringify(again.structuredContent)).toContain('already answered by an MCP client (answer_ask)');
      expect(await call(client, 'wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 45 })).toMatchObject({
        timedOut: false,
      });

      expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\n');
      expect(decided(await rig.readEvents(handle.sessionId))).toEqual([
        expect.objectContaining({ requestId: ask!.requestId, decision: 'allow', by: 'human', channel: 'mcp' }),
      ]);
    } finally {
      await finish(rig, client, pid);
    }
  });

  it('sends an elicitation to the client that created the session; accepting it runs the tool', async () => {
    const model = await rigs.model({ steps: [askingExecute('call_mcp_elicit'), echoToolResult] });
    const rig = await rigs.create({ baseUrl: model.baseUrl, orchestrator: { askTimeoutMs: 90_000 } });
    const { client, pid } = await connectMcp(rig, { capabilities: { elicitation: {} } });
    const elicited: ElicitRequest['params'][] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      elicited.push(request.params);
      return { action: 'accept', content: { decision: 'allow' } };
    });
    try {
      const handle = await call<{ sessionId: string }>(client, 'create_session', { workspace: rig.workspace, prompt: 'make a file' });
      expect(await call(client, 'wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 45 })).toMatchObject({
        timedOut: false,
      });

      expect(elicited).toHaveLength(1);
      expect(elicited[0]?.message).toContain(`execute: ${COMMAND}`);
      expect(JSON.stringify(elicited[0])).toContain('allow-session');
      expect(await readFile(join(rig.workspace, 'f.txt'), 'utf8')).toBe('hi\n');
      expect(decided(await rig.readEvents(handle.sessionId))).toEqual([
        expect.objectContaining({ decision: 'allow', by: 'human', channel: 'elicitation' }),
      ]);
      expect((await call<{ asks: OpenAsk[] }>(client, 'list_asks', {})).asks).toEqual([]);
    } finally {
      await finish(rig, client, pid);
    }
  });
});
