import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, ONE_WORKS_BIN } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { geminiTranscript, startScriptedGemini } from '../support/scripted-gemini.js';
import { call, expectReaped, stopOrchestrator } from './mcp-e2e-support.js';

// MCP `create_session` with `adapter: "gemini"`: the real Gemini CLI 0.61.0 behind the orchestrator
// `one-works mcp` auto-starts, a scripted Gemini server as its model.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('one-works mcp with the gemini adapter', () => {
  it('create_session with adapter gemini runs a turn; read_session shows its answer; send_message continues the conversation', async () => {
    const model = await startScriptedGemini({ steps: [{ text: 'MCP says hi.' }, { text: 'Second MCP answer.' }] });
    rigs.defer(() => model.close());
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9', gemini: { baseUrl: model.baseUrl } });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome },
      cwd: rig.root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'conformance', version: '0' });
    await client.connect(transport);
    const mcpPid = transport.pid!;
    try {
      const handle = await call<{ sessionId: string; settings: { model?: string } }>(client, 'create_session', {
        workspace: rig.workspace,
        prompt: 'hello gemini',
        adapter: 'gemini',
      });
      expect(handle.settings.model).toBe('scripted');
      const waited = await call<{ timedOut: boolean }>(client, 'wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 45 });
      expect(waited.timedOut).toBe(false);
      await call(client, 'send_message', { session: handle.sessionId, prompt: 'and again' });
      expect(
        (await call<{ timedOut: boolean }>(client, 'wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 45 })).timedOut,
      ).toBe(false);
      const read = await call<Record<string, unknown>>(client, 'read_session', { session: handle.sessionId });
      const text = JSON.stringify(read);
      expect(text).toContain('MCP says hi.');
      expect(text).toContain('Second MCP answer.');
      expect(text).toContain('gemini');
      expect(text).not.toContain('sk-rig-secret');
    } finally {
      await client.close();
    }
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.adapter).toBe('gemini');
    expect(record.runs.map((r) => r.status)).toEqual(['completed', 'completed']);
    // One conversation: the second model request carries the first turn (warm agent or session/load).
    expect(geminiTranscript(model.requests.filter((r) => r.kind === 'step')[1]!)).toContain('MCP says hi.');
    await expectReaped(mcpPid);
    await stopOrchestrator(rig.stateDir);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
