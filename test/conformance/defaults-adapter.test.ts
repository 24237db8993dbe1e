import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CLAUDE_TEST_VERSION, CliRigs, ONE_WORKS_BIN } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { startScriptedAnthropic } from '../support/scripted-anthropic.js';
import { call, expectReaped, stopOrchestrator } from './mcp-e2e-support.js';

// `defaults.adapter: claude-code` with droid disabled, from the user's side: the commands and
// the MCP tools that name no adapter use the real Claude Code, and droid is never probed,
// installed or reported (its managed pin is not even in a cache the rig could reach).

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

async function claudeDefaultRig(steps: Array<{ text: string }>) {
  const model = await startScriptedAnthropic({ steps });
  rigs.defer(() => model.close());
  const rig = await rigs.create({
    baseUrl: 'http://127.0.0.1:9',
    // A droid pin that no cache holds: resolving it would fail, so any probe of droid would show.
    droid: { enabled: false },
    cli: { source: 'managed', version: '0.199.0' },
    claude: { baseUrl: model.baseUrl },
    defaults: { adapter: 'claude-code' },
  });
  return { rig, model };
}

describe('defaults.adapter names the adapter of commands and tools that name none', () => {
  it('run, models, adapters and doctor use claude-code; the disabled droid is neither probed nor reported', async () => {
    const { rig } = await claudeDefaultRig([{ text: 'hello from the default adapter' }]);

    const list = await rig.run(['--json', 'adapters', 'list']);
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = list.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { adapter: string; version: string; facts: Record<string, string> });
    expect(rows).toEqual([
      expect.objectContaining({ adapter: 'claude-code', version: CLAUDE_TEST_VERSION, facts: { claudeCodeVersion: CLAUDE_TEST_VERSION } }),
    ]);

    const which = await rig.run(['adapters', 'which']);
    expect(which.exitCode, which.stderr).toBe(0);
    expect(which.stdout.trim()).toMatch(new RegExp(`/cli/claude-code/${CLAUDE_TEST_VERSION}/claude$`));

    const doctor = await rig.run(['doctor']);
    expect(doctor.stdout).toContain('ok    claude-code binary:');
    expect(doctor.stdout).not.toMatch(/droid/);

    const models = await rig.run(['--json', 'models']);
    expect(models.exitCode, models.stderr).toBe(0);
    expect((JSON.parse(models.stdout) as { models: Array<{ id: string }> }).models.map((m) => m.id)).toContain('scripted');

    const run = await rig.run(['--json', 'run', '--workspace', rig.workspace, 'hello']);
    expect(run.exitCode, run.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).adapter).toBe('claude-code');
    expect(run.stdout).toContain('hello from the default adapter');
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('the MCP tools models and create_session without an adapter use claude-code', async () => {
    const { rig } = await claudeDefaultRig([{ text: 'mcp default reply' }]);
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
      const models = await call<{ adapter: string; models: Array<{ id: string }> }>(client, 'models', {});
      expect(models.adapter).toBe('claude-code');
      expect(models.models.map((m) => m.id)).toContain('scripted');

      const handle = await call<{ sessionId: string }>(client, 'create_session', { workspace: rig.workspace, prompt: 'hi' });
      let settled: { settled: Array<{ sessionId: string; adapter: string; latestRun?: { status: string } }> };
      do {
        settled = await call(client, 'wait_for_sessions', { sessions: [handle.sessionId], timeoutSeconds: 45 });
      } while (settled.settled.length === 0);
      expect(settled.settled[0]).toMatchObject({ adapter: 'claude-code', latestRun: { status: 'completed' } });
    } finally {
      await client.close();
    }
    await expectReaped(mcpPid);
    await stopOrchestrator(rig.stateDir);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
