import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TSX_LOADER } from '../peers/fake-droid-binary.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// An MCP server declared in YAML is started by the real droid 0.225.2 and reported in its
// mcp_status_changed (recorded as a `native` event), while a server in the workspace's own
// .factory/mcp.json is blocked by the isolated settings' mcpPolicy and never started.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const SERVER = fileURLToPath(new URL('../support/stdio-mcp-server.ts', import.meta.url));
const ENV_SECRET = 'sk-mcp-env-secret-5e1d';

interface ServerStatus {
  name: string;
  source?: string;
  status?: string;
  blockedByPolicy?: boolean;
}

// `label` goes into the started file. It must differ from the server name: YAML env values are
// secrets, so One Works would redact the name from every recorded event.
function stdioServer(label: string, startedFile: string, extraEnv: Record<string, string> = {}) {
  return {
    type: 'stdio',
    command: process.execPath,
    args: ['--import', TSX_LOADER, SERVER],
    env: { MCP_SERVER_NAME: label, MCP_STARTED_FILE: startedFile, ...extraEnv },
  };
}

function probe(pid: number): string | undefined {
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
}

// A stopped process can linger a moment as a zombie until it is reaped: wait (bounded).
async function expectGone(pid: number): Promise<void> {
  for (let waited = 0; probe(pid) !== 'ESRCH' && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(probe(pid), `pid ${pid}`).toBe('ESRCH');
}

describe('YAML mcpServers with the real droid', () => {
  it('starts and reports the YAML server, and never starts the workspace one', async () => {
    // The pause gives droid time to connect the server before the session closes.
    const model = await rigs.model({ steps: [{ text: 'Hello.', delayMs: 2_000 }] });
    const dir = await rigs.tempDir('ow-mcp-');
    const started = join(dir, 'started.txt');
    const rig = await rigs.create({
      baseUrl: model.baseUrl,
      droid: { mcpServers: { yamltiny: stdioServer('from-yaml', started, { TINY_SECRET: ENV_SECRET }) } },
    });
    await mkdir(join(rig.workspace, '.factory'));
    await writeFile(
      join(rig.workspace, '.factory', 'mcp.json'),
      JSON.stringify({ mcpServers: { wsserver: stdioServer('from-workspace', started) } }),
    );

    const result = await rig.run(['run', '--workspace', rig.workspace, 'say hello']);
    expect(result.exitCode, result.stderr).toBe(0);

    const [id] = await rig.sessionIds();
    const statuses = (await rig.readEvents(id!))
      .flatMap((e) => (e.type === 'native' && e.nativeType === 'mcp_status_changed' ? [e.payload as { servers: ServerStatus[] }] : []))
      .flatMap((payload) => payload.servers);
    const yaml = statuses.filter((s) => s.name === 'yamltiny');
    const workspace = statuses.filter((s) => s.name === 'wsserver');
    expect(yaml.length).toBeGreaterThan(0);
    for (const status of yaml) expect(status).toMatchObject({ source: 'user' });
    expect(yaml.some((s) => s.blockedByPolicy === true)).toBe(false);
    expect(workspace.length).toBeGreaterThan(0);
    // droid 0.225.2 labels the workspace's server `project` or (seen on 2026-12-01, same binary) `folder`.
    for (const status of workspace) expect(['project', 'folder']).toContain(status.source);
    for (const status of workspace) expect(status).toMatchObject({ blockedByPolicy: true });

    // Only the YAML server ever ran, and it is gone with the session.
    const lines = (await readFile(started, 'utf8')).trim().split('\n');
    expect(lines.map((line) => line.split(' ')[0])).toEqual(['from-yaml']);
    for (const line of lines) await expectGone(Number(line.split(' ')[1]));
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);

    // The env value is a secret: it reached the server's config, never the record or the output.
    expect(await readFile(join(rig.sessionHome(id!), '.factory', 'mcp.json'), 'utf8')).toContain(ENV_SECRET);
    const recorded = await readFile(join(rig.stateDir, 'sessions', id!, 'events.jsonl'), 'utf8');
    expect(
      recorded + (await readFile(join(rig.stateDir, 'sessions', id!, 'session.json'), 'utf8')) + result.stdout + result.stderr,
    ).not.toContain(ENV_SECRET);
  });
});
