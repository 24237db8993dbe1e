import { access, lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from '../../core/events/index.js';
import { CliRigs, RIG_API_KEY, type CliRig } from '../support/one-works-cli.js';
import { startRawDroid } from '../support/raw-droid-client.js';

// The user's real HOME is never read or written: the CLI runs with HOME (and XDG roots) set to
// a stand-in home whose ~/.factory would break the turn if droid read it, and a workspace
// .factory/mcp.json declares a stdio server that would leave a marker if droid started it.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TEXT = 'Answered by the scripted model.';

// Shadows custom:Scripted-0 with an entry pointing at a dead port, and turns autonomy off.
const CANARY_SETTINGS = {
  customModels: [
    {
      model: 'x',
      displayName: 'Scripted',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'canary-key',
      provider: 'generic-chat-completion-api',
    },
  ],
  sessionDefaultSettings: { autonomyLevel: 'off' },
};

interface Canaries {
  userMarker: string;
  projectMarker: string;
  env: Record<string, string>;
}

async function plantCanaries(rig: CliRig): Promise<Canaries> {
  const userMarker = join(rig.root, 'user-mcp-started');
  const projectMarker = join(rig.root, 'project-mcp-started');
  const factory = join(rig.userHome, '.factory');
  await mkdir(factory);
  await writeFile(join(factory, 'settings.json'), JSON.stringify(CANARY_SETTINGS));
  await writeFile(
    join(factory, 'mcp.json'),
    JSON.stringify({ mcpServers: { 'user-canary': { type: 'stdio', command: 'sh', args: ['-c', `touch ${userMarker}`] } } }),
  );
  await mkdir(join(rig.workspace, '.factory'));
  await writeFile(
    join(rig.workspace, '.factory', 'mcp.json'),
    JSON.stringify({ mcpServers: { 'project-canary': { type: 'stdio', command: 'sh', args: ['-c', `touch ${projectMarker}`] } } }),
  );
  const env: Record<string, string> = { HOME: rig.userHome };
  for (const [name, dir] of [
    ['XDG_CONFIG_HOME', '.config'],
    ['XDG_CACHE_HOME', '.cache'],
    ['XDG_DATA_HOME', '.local/share'],
    ['XDG_STATE_HOME', '.local/state'],
  ]) {
    env[name!] = join(rig.userHome, dir!);
  }
  return { userMarker, projectMarker, env };
}

// Every entry under `root`: relative path, kind, size and mtime.
async function snapshot(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const path = join(dir, name);
      const info = await lstat(path);
      out.push(`${relative(root, path)} ${info.isDirectory() ? 'dir' : 'file'} ${info.size} ${info.mtimeMs}`);
      if (info.isDirectory()) await walk(path);
    }
  };
  await walk(root);
  return out;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

// The MCP servers droid reported in its status notifications, with their flags.
function mcpServers(events: RuntimeEvent[]): Array<{ name: string; source?: string; blockedByPolicy?: boolean }> {
  return events.flatMap((e) =>
    e.type === 'native' && e.nativeType === 'mcp_status_changed' ? ((e.payload as { servers?: [] }).servers ?? []) : [],
  );
}

describe('one-works run leaves the real HOME alone', () => {
  it('completes against the scripted model with a hostile ~/.factory, changes nothing there, starts no project MCP server', async () => {
    const model = await rigs.model({ steps: [{ text: TEXT }] });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const canaries = await plantCanaries(rig);
    const before = await snapshot(rig.userHome);

    const result = await rig.run(['run', '--workspace', rig.workspace, 'say something'], { env: canaries.env });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(result.stdout).toContain(TEXT);
    const [id] = await rig.sessionIds();
    expect((await rig.readSession(id!)).runs[0]).toMatchObject({ status: 'completed', autonomy: 'low' });
    // droid used the session's settings: the scripted model got the rig's key, never the canary's.
    const calls = model.requests.filter((r) => r.path.startsWith('/v1/chat/completions'));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call.headers.authorization).toBe(`Bearer ${RIG_API_KEY}`);

    expect(await snapshot(rig.userHome)).toEqual(before);
    expect(await exists(canaries.userMarker)).toBe(false);
    expect(await exists(canaries.projectMarker)).toBe(false);
    const servers = mcpServers(await rig.readEvents(id!));
    expect(servers.map((s) => s.name)).not.toContain('user-canary');
    const project = servers.filter((s) => s.name === 'project-canary');
    expect(project.length).toBeGreaterThan(0); // droid saw the project server ...
    // ... and the policy blocked it. droid 0.225.2 labels the workspace's server `project` or (seen
    // on 2026-12-01 with the same binary) `folder`; either is the workspace's, never the user's.
    expect(project.every((s) => (s.source === 'project' || s.source === 'folder') && s.blockedByPolicy === true)).toBe(true);
  });

  it('control: droid itself starts the project server when nothing blocks it (the canary works)', async () => {
    // Without One Works: the real droid, a fresh HOME with no policy, the same workspace canary.
    const rig = await rigs.create({ baseUrl: 'http://127.0.0.1:9/v1' });
    const canaries = await plantCanaries(rig);
    const client = await startRawDroid({
      binary: process.env.ONE_WORKS_TEST_DROID!,
      cwd: rig.workspace,
      home: join(rig.root, 'raw-home'),
      settings: {},
    });
    try {
      await client.request('droid.initialize_session', { machineId: 'control', cwd: rig.workspace });
      for (let i = 0; i < 100 && !(await exists(canaries.projectMarker)); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await exists(canaries.projectMarker)).toBe(true);
    } finally {
      await client.close();
    }
  });
});
