import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, ONE_WORKS_BIN, RIG_API_KEY } from '../support/one-works-cli.js';
import { call, expectReaped } from './mcp-e2e-support.js';

// The real droid 0.225.2 runs `env | base64` (wrapped at 76 columns) and `env | base64 | sed
// 's/$/\r/'` (CRLF) with the BYOK key (ONE_WORKS_BYOK_KEY_0) and FACTORY_API_KEY in its
// environment. Whatever the alignment and the line breaks, neither key can be decoded back out
// of events.jsonl, `events --json` or MCP read_session.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const FACTORY_API_KEY = 'fk-wrapped-canary-3b8d1f6e2a';
const KEYS = [RIG_API_KEY, FACTORY_API_KEY];

// Everything a text decodes to as base64, at each character offset, after unwrapping it.
function decodings(text: string): string[] {
  const compact = text.replace(/\\r|\\n|\s/g, '');
  return [0, 1, 2, 3].map((offset) => Buffer.from(compact.slice(offset), 'base64').toString('latin1'));
}

function expectNoKeyDecodes(text: string, where: string): void {
  for (const decoded of decodings(text)) for (const key of KEYS) expect(decoded.includes(key), `${key} decodes from ${where}`).toBe(false);
}

describe('wrapped base64 of an injected key is redacted', () => {
  it('in events.jsonl, events --json and MCP read_session', async () => {
    const command = (cmd: string, id: string) => ({
      id,
      name: 'Execute',
      arguments: { command: cmd, riskLevel: 'low', riskLevelReason: 'dump' },
    });
    const model = await rigs.model({
      steps: [
        // Variable names of several lengths shift the keys through all three base64 alignments.
        {
          toolCalls: [
            command('env | sort | base64', 'b64_lf'),
            command("env | sort | sed 's/^/A/' | base64 | sed 's/$/\\r/'", 'b64_crlf'),
            command("env | sort | sed 's/^/AB/' | base64", 'b64_shift2'),
          ],
        },
        { text: 'dumped' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    const run = await rig.run(['run', '--workspace', rig.workspace, 'dump the environment'], { env: { FACTORY_API_KEY } });
    expect(run.exitCode, run.stderr).toBe(0);
    const [id] = await rig.sessionIds();

    const results = (await rig.readEvents(id!)).flatMap((e) => (e.type === 'tool.result' ? [e] : []));
    expect(results.map((r) => r.toolUseId).sort()).toEqual(['b64_crlf', 'b64_lf', 'b64_shift2']);
    for (const result of results) {
      // The dumps are real wrapped base64 (several lines of 76 columns) and something was redacted in each.
      expect(result.output.split('\n').filter((line) => /^[A-Za-z0-9+/=]{76}\r?$/.test(line)).length).toBeGreaterThan(3);
      expect(result.output).toContain('[REDACTED]');
      expect(result.output.includes('\r\n')).toBe(result.toolUseId === 'b64_crlf');
      expectNoKeyDecodes(result.output, `tool.result ${result.toolUseId}`);
    }
    for (const line of await rig.readEventLines(id!)) expectNoKeyDecodes(line, 'events.jsonl');
    const json = await rig.run(['--json', 'events', id!], { env: { FACTORY_API_KEY } });
    expectNoKeyDecodes(json.stdout, 'events --json');

    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [ONE_WORKS_BIN, '--config', rig.configPath, 'mcp'],
      env: { PATH: process.env.PATH ?? '', HOME: rig.userHome, FACTORY_API_KEY },
      cwd: rig.root,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'conformance', version: '0' });
    await client.connect(transport);
    const mcpPid = transport.pid!;
    try {
      const read = await call<{ events: Array<{ type: string; output?: string }> }>(client, 'read_session', {
        session: id,
        maxEvents: 50,
      });
      const outputs = read.events.filter((e) => e.type === 'tool.result').map((e) => e.output ?? '');
      expect(outputs).toHaveLength(3);
      for (const output of outputs) expectNoKeyDecodes(output, 'read_session');
    } finally {
      await client.close();
    }
    // Closing stdin ends the MCP server; its orchestrator exits when idle (dispose stops it otherwise).
    await expectReaped(mcpPid);
  });
});
