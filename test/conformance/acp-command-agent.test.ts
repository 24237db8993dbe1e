import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// `--adapter acp:<name>`: an ACP agent declared by command in adapters.acp.agents, here the fake
// ACP agent on the SDK's agent side (test/peers/fake-acp-agent.ts), for what the real agents do
// not do on demand: no loadSession, unknown update kinds, a permission for a tool call never
// announced, terminal content without a terminal, a crash mid-prompt.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const FAKE_AGENT = fileURLToPath(new URL('../peers/fake-acp-agent', import.meta.url));
const SECRET = 'fake-acp-secret-93b1d0';
const MCP_SECRET = 'mcp-env-secret-4d2a77';
const MCP_HEADER_SECRET = 'mcp-header-secret-81fe0c';

async function fakeRig(faults: string[], extra: Record<string, unknown> = {}) {
  return rigs.create({
    baseUrl: 'http://127.0.0.1:9',
    acp: {
      agents: { fake: { command: FAKE_AGENT, env: { FAKE_ACP_FAULT: faults.join(',') }, credentials: ['FAKE_ACP_KEY'] } },
      ...extra,
    },
  });
}

describe('acp:<name>: an ACP agent by command', () => {
  it('a text turn; a plan and an unknown update kind are kept as native events; the credential is passed and redacted', async () => {
    const rig = await fakeRig(['plan', 'unknown-update']);
    const result = await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'hello'], {
      env: { FAKE_ACP_KEY: SECRET },
    });
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.adapter).toBe('acp:fake');
    expect(record.nativeSessionId).toMatch(/^fake-session-/);
    expect(record.runs[0]).toMatchObject({ status: 'completed' });
    const events = await rig.closedEvents(id!);
    expect(events.filter((e) => e.type === 'native').map((e) => e.nativeType)).toEqual(['plan', 'hologram_update']);
    expect(events.find((e) => e.type === 'native' && e.nativeType === 'hologram_update')).toMatchObject({ payload: { shimmer: 7 } });
    // The agent echoed the key it was given: it arrived, and One Works redacted it.
    expect(record.runs[0]?.text).toBe('fake reply: hello (key [REDACTED])');
    expect(events.find((e) => e.type === 'session.started')).toMatchObject({
      adapter: 'acp:fake',
      versionFacts: { api: 'acp' },
      resumed: false,
    });
    // Redacted wherever One Works wrote or printed it.
    expect(result.stdout + result.stderr).not.toContain(SECRET);
    expect((await rig.readEventLines(id!)).join('\n')).not.toContain(SECRET);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('a permission for a tool call never announced opens the span; allowed at autonomy high it runs, terminal content tolerated', async () => {
    const rig = await fakeRig(['unseen-permission'], { autonomy: 'high' });
    const result = await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'go']);
    expect(result.exitCode, result.stderr + result.stdout).toBe(0);
    expect(existsSync(join(rig.workspace, 'unseen.txt'))).toBe(true);
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(events.filter((e) => e.type === 'tool.call').map((e) => [e.toolUseId, e.phase, e.label])).toEqual([
      ['tc-unseen-1', 'input', 'execute: touch unseen.txt'],
    ]);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({
      decision: 'allow',
      option: 'allow-once',
      nativeOption: 'yes',
    });
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([
      expect.objectContaining({ toolUseId: 'tc-unseen-1', isError: false, output: 'wrote unseen.txt', closedBy: 'agent' }),
    ]);
  });

  it('declined (autonomy low, nobody to ask): the reject option is chosen, never allow_always, and nothing runs', async () => {
    const rig = await fakeRig(['unseen-permission']);
    await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'go']);
    expect(existsSync(join(rig.workspace, 'unseen.txt'))).toBe(false);
    const [id] = await rig.sessionIds();
    const events = await rig.readEvents(id!);
    expect(events.find((e) => e.type === 'permission.decided')).toMatchObject({ decision: 'deny', option: 'deny', nativeOption: 'no' });
    expect(events.filter((e) => e.type === 'tool.result')).toEqual([expect.objectContaining({ toolUseId: 'tc-unseen-1', isError: true })]);
  });

  it('an agent without loadSession cannot resume: send fails with session_load_failed and no new conversation starts', async () => {
    const rig = await fakeRig(['no-load']);
    const first = await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'one']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    const before = await rig.readSession(id!);
    const second = await rig.run(['--json', 'send', id!, 'two']);
    expect(second.exitCode).not.toBe(0);
    expect(second.stdout + second.stderr).toContain('session_load_failed');
    expect(second.stdout + second.stderr).toContain('does not offer session/load');
    const after = await rig.readSession(id!);
    expect(after.nativeSessionId).toBe(before.nativeSessionId);
    expect(after.runs.at(-1)?.status).toBe('failed');
  });

  it('an agent that loads: send resumes the same native session in a new process', async () => {
    const rig = await fakeRig([]);
    const first = await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'one']);
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    const second = await rig.run(['send', id!, 'two']);
    expect(second.exitCode, second.stderr + second.stdout).toBe(0);
    expect(second.stdout).toContain('fake reply: two');
    const events = await rig.closedEvents(id!, 2);
    expect(events.filter((e) => e.type === 'session.started').map((e) => e.resumed)).toEqual([false, true]);
  });

  it('the configured MCP servers, and only they, are given in session/new and session/load; their secrets are redacted', async () => {
    const log = join(await rigs.tempDir('ow-acp-mcp-'), 'mcp.jsonl');
    const rig = await rigs.create({
      baseUrl: 'http://127.0.0.1:9',
      acp: {
        agents: {
          fake: {
            command: FAKE_AGENT,
            env: { FAKE_ACP_MCP_LOG: log },
            mcpServers: {
              tiny: { command: '/usr/bin/tiny-mcp', args: ['--stdio'], env: { TINY_TOKEN: MCP_SECRET } },
              web: { type: 'http', url: 'http://127.0.0.1:9/mcp', headers: { Authorization: `Bearer ${MCP_HEADER_SECRET}` } },
            },
          },
        },
      },
    });
    const first = await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'one']);
    expect(first.exitCode, first.stderr + first.stdout).toBe(0);
    const [id] = await rig.sessionIds();
    await rig.closedEvents(id!);
    const second = await rig.run(['send', id!, 'two']);
    expect(second.exitCode, second.stderr + second.stdout).toBe(0);
    const servers = [
      { name: 'tiny', command: '/usr/bin/tiny-mcp', args: ['--stdio'], env: [{ name: 'TINY_TOKEN', value: MCP_SECRET }] },
      {
        type: 'http',
        name: 'web',
        url: 'http://127.0.0.1:9/mcp',
        headers: [{ name: 'Authorization', value: `Bearer ${MCP_HEADER_SECRET}` }],
      },
    ];
    const received = (await readFile(log, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(received).toEqual([
      { method: 'session/new', mcpServers: servers },
      { method: 'session/load', mcpServers: servers },
    ]);
    for (const text of [first.stdout, first.stderr, second.stdout, second.stderr, (await rig.readEventLines(id!)).join('\n')]) {
      expect(text).not.toContain(MCP_SECRET);
      expect(text).not.toContain(MCP_HEADER_SECRET);
    }
  });

  it('an MCP transport the agent does not advertise (sse) is refused before session/new, naming the server', async () => {
    const log = join(await rigs.tempDir('ow-acp-mcp-'), 'mcp.jsonl');
    const rig = await rigs.create({
      baseUrl: 'http://127.0.0.1:9',
      acp: {
        agents: {
          fake: {
            command: FAKE_AGENT,
            env: { FAKE_ACP_MCP_LOG: log },
            mcpServers: { events: { type: 'sse', url: 'http://127.0.0.1:9/sse' } },
          },
        },
      },
    });
    const result = await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'one']);
    expect(result.exitCode).not.toBe(0);
    expect(result.stderr + result.stdout).toContain("does not accept these MCP servers' transport (its mcpCapabilities): events (sse)");
    expect(existsSync(log)).toBe(false);
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('a crash mid-prompt fails the turn with process_exited and leaves no process', async () => {
    const rig = await fakeRig(['crash']);
    const result = await rig.run(['run', '--adapter', 'acp:fake', '--workspace', rig.workspace, 'boom']);
    expect(result.exitCode).not.toBe(0);
    const [id] = await rig.sessionIds();
    const record = await rig.readSession(id!);
    expect(record.runs[0]).toMatchObject({ status: 'failed', reason: 'process_exited' });
    const events = await rig.readEvents(id!);
    const error = events.find((e) => e.type === 'error' && e.code === 'process_exited');
    expect(error?.type === 'error' ? error.message : '').toContain('exited with code 3');
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
