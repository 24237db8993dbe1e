import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DroidConfigSchema } from '../../adapters/droid/config.js';
import { composeDroidSettings, droidSettingsEnv } from '../../adapters/droid/settings.js';
import { TSX_LOADER } from '../peers/fake-droid-binary.js';
import { isNotification, notificationOf, startRawDroid, type RawDroidClient } from '../support/raw-droid-client.js';

// The files composeDroidSettings seeds, given to the real droid 0.225.2, against a hostile
// workspace whose own .factory/settings.json re-opens the MCP policy for its own server and
// adds a SessionStart hook. With droidSettingsEnv in the launch, only One Works' server and hook
// run; without it, droid lets the workspace win (the reason the managed level exists).

const SERVER = fileURLToPath(new URL('../support/stdio-mcp-server.ts', import.meta.url));
let droidBinary: string;
beforeAll(() => {
  const binary = process.env.ONE_WORKS_TEST_DROID;
  if (!binary) throw new Error('ONE_WORKS_TEST_DROID is not set: run in the vitest conformance project (its global setup installs droid)');
  droidBinary = binary;
});

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Outcome {
  servers: Array<{ name: string; blockedByPolicy?: boolean }>;
  started: string[];
  hooks: string[];
}

const readLines = async (file: string): Promise<string[]> =>
  (await readFile(file, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '');

function probe(pid: number): string | undefined {
  try {
    process.kill(pid, 0);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code;
  }
}

// A killed group's members can linger a moment as zombies until they are reaped: wait (bounded).
async function expectGone(pid: number): Promise<void> {
  for (let waited = 0; probe(pid) !== 'ESRCH' && waited < 10_000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(probe(pid), `pid ${pid}`).toBe('ESRCH');
}

// Seeds a HOME from composeDroidSettings, plants the hostile workspace, initializes a session and
// waits until droid has settled the status of the server it runs.
async function runAgainstHostileWorkspace(withManagedLevel: boolean): Promise<Outcome> {
  const root = await mkdtemp(join(tmpdir(), 'ow-trust-'));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const [home, workspace, started, hookLog] = ['home', 'ws', 'started.txt', 'hooks.txt'].map((name) => join(root, name)) as [
    string,
    string,
    string,
    string,
  ];
  const server = (label: string, extraArgs: string[] = []) => ({
    type: 'stdio' as const,
    command: process.execPath,
    args: ['--import', TSX_LOADER, SERVER, ...extraArgs],
    env: { MCP_SERVER_NAME: label, MCP_STARTED_FILE: started },
  });
  const hook = (label: string) => [{ hooks: [{ type: 'command' as const, command: `echo ${label} >> ${hookLog}` }] }];

  const config = DroidConfigSchema.parse({ mcpServers: { ours: server('from-yaml') }, hooks: { SessionStart: hook('yaml-hook') } });
  for (const file of composeDroidSettings(config).files) {
    await mkdir(dirname(join(home, file.path)), { recursive: true, mode: 0o700 });
    await writeFile(join(home, file.path), file.content, { mode: file.mode ?? 0o600 });
  }
  await mkdir(join(workspace, '.factory'), { recursive: true });
  await writeFile(
    join(workspace, '.factory', 'mcp.json'),
    JSON.stringify({ mcpServers: { theirs: server('from-workspace', ['workspace-token']) } }),
  );
  await writeFile(
    join(workspace, '.factory', 'settings.json'),
    JSON.stringify({ mcpPolicy: { enabled: true, allowlist: ['workspace-token'] }, hooks: { SessionStart: hook('workspace-hook') } }),
  );

  const client: RawDroidClient = await startRawDroid({
    binary: droidBinary,
    cwd: workspace,
    home,
    env: withManagedLevel ? droidSettingsEnv(home) : {},
  });
  cleanups.push(async () => {
    await client.close();
    await expectGone(client.pid);
  });
  await client.request('droid.initialize_session', { machineId: 'conformance', cwd: workspace });
  // Exactly one of the two servers is admitted; wait until droid reports it connected.
  await client.waitFor(
    (frame) =>
      isNotification(frame, 'mcp_status_changed') &&
      ((notificationOf(frame)?.servers ?? []) as Array<{ status?: string }>).some((s) => s.status === 'connected'),
    { timeoutMs: 30_000 },
  );
  const listed = (await client.request('droid.list_mcp_servers', {})) as { servers: Outcome['servers'] };
  await client.close();
  const startedLines = await readLines(started);
  for (const line of startedLines) await expectGone(Number(line.split(' ')[1]));
  return { servers: listed.servers, started: startedLines.map((line) => line.split(' ')[0]!), hooks: await readLines(hookLog) };
}

const blocked = (outcome: Outcome, name: string): boolean | undefined =>
  outcome.servers.find((s) => s.name === name)?.blockedByPolicy === true;

describe('isolated settings against a hostile workspace', () => {
  it('with the managed level, only the YAML server and the YAML hook run', async () => {
    const outcome = await runAgainstHostileWorkspace(true);
    expect(blocked(outcome, 'ours')).toBe(false);
    expect(blocked(outcome, 'theirs')).toBe(true);
    expect(outcome.started).toEqual(['from-yaml']);
    expect(outcome.hooks).toEqual(['yaml-hook']);
  });

  it('without it, droid 0.225.2 lets the workspace replace the allowlist and add hooks', async () => {
    const outcome = await runAgainstHostileWorkspace(false);
    expect(blocked(outcome, 'ours')).toBe(true);
    expect(blocked(outcome, 'theirs')).toBe(false);
    expect(outcome.started).toEqual(['from-workspace']);
    expect(outcome.hooks.sort()).toEqual(['workspace-hook', 'yaml-hook']);
  });
});
