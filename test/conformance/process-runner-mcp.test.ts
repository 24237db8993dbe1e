import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterEach, describe, expect, it } from 'vitest';
import { TSX_LOADER } from '../peers/fake-droid-binary.js';
import { CliRigs } from '../support/one-works-cli.js';
import type { RigProcess } from '../support/rig-processes.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { toolResults } from '../support/scripted-model.js';
import { HARNESS, REFERENCE_RUNNER, referenceRig } from './process-runner-support.js';

// MCP servers as harness tools: One Works starts the harness's MCP servers (a small server on
// the MCP SDK, test/support/sdk-mcp-server.ts), offers their tools to the reference runner as
// `<server>__<tool>`, and makes each call itself once the policy allowed it. The runner never
// starts a server; a call the policy declines never reaches the server; bad arguments are an
// is_error result.

const rigs = new CliRigs();
const temps: string[] = [];
afterEach(async () => {
  await rigs.dispose();
  for (const dir of temps.splice(0)) await rm(dir, { recursive: true, force: true });
});

const ADAPTER = `process:${HARNESS}`;
const SERVER = fileURLToPath(new URL('../support/sdk-mcp-server.ts', import.meta.url));

// The parent pid of a process (Linux /proc), or undefined once it is gone.
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

// Under bwrap the sandbox's /tmp is private: a checkout under /tmp (a CI clone) hides the server's
// node_modules and the tsx loader from it. The server is bundled into one self-contained file (the
// MCP SDK and zod inside), whose folder One Works binds read-only like a runner's script.
async function bundledServer(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'ow-mcp-server-'));
  temps.push(dir);
  const outfile = join(dir, 'sdk-mcp-server.mjs');
  await build({
    entryPoints: [SERVER],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    banner: { js: "import { createRequire as __req } from 'node:module'; const require = __req(import.meta.url);" },
    logLevel: 'error',
  });
  return outfile;
}

describe('process runner: MCP servers as harness tools', () => {
  it('an allowed MCP tool call runs in the server One Works started; a declined one and bad arguments never reach it', async () => {
    let toolNames: string[] = [];
    let during: Array<RigProcess & { parent: number | undefined }> = [];
    const notesDir = await mkdtemp(join(tmpdir(), 'ow-mcp-notes-'));
    temps.push(notesDir);
    const notesFile = join(notesDir, 'notes.txt');
    const server = (label: string, kind?: string) => ({
      command: process.execPath,
      args: ['--import', TSX_LOADER, SERVER],
      // Env values are secrets (redacted everywhere), so the label differs from the server's name.
      env: { MCP_SERVER_NAME: label, NOTES_FILE: notesFile },
      ...(kind ? { kind } : {}),
    });
    const { rig, model } = await referenceRig(
      rigs,
      [
        (request) => {
          toolNames = (((request.body as { tools?: unknown[] }).tools ?? []) as Array<{ function: { name: string } }>).map(
            (t) => t.function.name,
          );
          // Sampled while the runner waits for this answer: the servers run now.
          during = rig.processes().map((p) => ({ ...p, parent: parentOf(p.pid) }));
          return {
            toolCalls: [
              { id: 'call_ok', name: 'notes__note', arguments: { text: 'ECHO-5' } },
              { id: 'call_declined', name: 'risky__note', arguments: { text: 'NOPE-6' } },
              { id: 'call_bad', name: 'notes__note', arguments: { words: 'x' } },
            ],
          };
        },
        { text: 'Done with the notes.' },
      ],
      { mcpServers: { notes: server('label-n1', 'read'), risky: server('label-r1') } },
    );
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'take notes']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('Done with the notes.');

    // The runner was offered the servers' tools next to the built-in ones.
    expect(toolNames).toEqual(expect.arrayContaining(['read_file', 'run_command', 'notes__note', 'risky__note']));
    // Only the allowed call reached a server.
    expect(await readFile(notesFile, 'utf8')).toBe('label-n1: ECHO-5\n');
    const results = toolResults(model.requests.filter((r) => r.kind === 'step')[1]!);
    expect(results.find((r) => r.toolCallId === 'call_ok')?.content).toBe('noted ECHO-5');
    expect(results.find((r) => r.toolCallId === 'call_declined')?.content).toContain('denied');
    expect(results.find((r) => r.toolCallId === 'call_bad')?.content).toContain('invalid arguments for notes__note');

    // Both servers ran while the runner did, started by One Works (never by the runner).
    const runner = during.find((p) => p.args.includes('openai-runner.mjs'));
    const servers = during.filter((p) => p.args.includes('sdk-mcp-server.ts'));
    expect(runner).toBeDefined();
    expect(servers).toHaveLength(2);
    for (const s of servers) {
      expect(s.parent).toBeDefined();
      expect(s.parent).not.toBe(runner!.pid);
    }

    const [id] = await rig.sessionIds();
    const events = await rig.closedEvents(id!);
    const decided = events.filter((e) => e.type === 'permission.decided');
    expect(decided.map((e) => (e as { decision: string }).decision)).toEqual(['allow', 'deny']);
    expect(events.find((e) => e.type === 'tool.call' && e.toolUseId === 'call_ok')).toMatchObject({
      name: 'notes__note',
      kind: 'read',
      label: 'mcp: notes/note',
    });
    expect(events.find((e) => e.type === 'tool.result' && e.toolUseId === 'call_ok')).toMatchObject({ isError: false });
    expect(events.find((e) => e.type === 'tool.result' && e.toolUseId === 'call_declined')).toMatchObject({ isError: true });
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });

  it('sandbox: bwrap: the MCP server runs inside the session sandbox and its call goes through', async () => {
    const model = await rigs.model({
      steps: [{ toolCalls: [{ id: 'call_in', name: 'notes__note', arguments: { text: 'SANDBOXED-7' } }] }, { text: 'Noted inside.' }],
      strict: true,
    });
    // The server may write the workspace only: the notes file lives there. The rig's workspace
    // path is only known once the rig exists, so the server is given a relative path (its cwd is the workspace).
    const rig = await rigs.create({
      baseUrl: 'http://127.0.0.1:9',
      sandbox: 'bwrap',
      process: {
        harnesses: {
          [HARNESS]: {
            command: process.execPath,
            args: [REFERENCE_RUNNER],
            model: 'scripted',
            provider: { baseUrl: model.baseUrl, apiKey: 'sk-bwrap-mcp-test' },
            mcpServers: {
              notes: {
                command: process.execPath,
                args: [await bundledServer()],
                env: { MCP_SERVER_NAME: 'label-b1', NOTES_FILE: 'sandbox-notes.txt' },
                kind: 'read',
              },
            },
          },
        },
      },
    });
    const result = await rig.run(['run', '--adapter', ADAPTER, '--workspace', rig.workspace, 'note inside']);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain('Noted inside.');
    expect(await readFile(join(rig.workspace, 'sandbox-notes.txt'), 'utf8')).toBe('label-b1: SANDBOXED-7\n');
    expect(toolResults(model.requests.filter((r) => r.kind === 'step')[1]!)[0]?.content).toBe('noted SANDBOXED-7');
    expect(await waitForNoProcesses(() => rig.processes(), 15_000)).toEqual([]);
  });
});
