import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa, type ResultPromise } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileStore } from '../../core/store/index.js';
import type { SessionRecord } from '../../core/store/index.js';
import { CLI_TEST_TIMEOUT_MS, createCliSandbox, ONE_WORKS_BIN, type CliSandbox } from '../support/cli-runner.js';

// `server status|stop`, `sessions archive|rm` and `adapters prune` from the user's side: real
// CLI runs against a temp state and cache directory (no agent runs here; the live-turn refusal
// of `sessions rm` is in test/conformance/housekeeping-real-droid.test.ts).

let box: CliSandbox;
let stateDir: string;
let cacheDir: string;
const servers: ResultPromise[] = [];

beforeEach(async () => {
  box = await createCliSandbox({ prefix: 'ow-house-' });
  stateDir = join(box.root, 'state');
  cacheDir = join(box.root, 'cache');
  await box.writeConfig(
    [
      `state: { directory: ${stateDir} }`,
      `cache: { directory: ${cacheDir} }`,
      `workspaces: { approved: [${box.cwd}] }`,
      'orchestrator: { cancelGraceMs: 1000 }',
      'adapters:',
      '  droid:',
      '    cli: { source: managed, version: 0.225.2 }',
      '',
    ].join('\n'),
  );
});
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.kill('SIGTERM');
    await server.catch(() => undefined);
  }
  await box.remove();
});

// Wrapped: an async function returning the (thenable) process would wait for its exit.
async function startServer(): Promise<{ process: ResultPromise; pid: number }> {
  const server = execa(process.execPath, [ONE_WORKS_BIN, 'serve'], { cwd: box.cwd, env: box.env, extendEnv: false, reject: false });
  servers.push(server);
  for (let waited = 0; !existsSync(join(stateDir, 'orchestrator.sock')); waited += 100) {
    if (waited > 30_000) throw new Error('serve did not start');
    await sleep(100);
  }
  return { process: server, pid: server.pid! };
}

async function seedSession(id: string, extra: Partial<SessionRecord> = {}): Promise<string> {
  const store = await createFileStore(stateDir);
  const now = new Date().toISOString();
  await store.writeSession({
    id,
    adapter: 'droid',
    workspace: box.cwd,
    createdAt: now,
    updatedAt: now,
    status: 'idle',
    runs: [],
    ...extra,
  });
  await store.appendEvents(id, [{ sessionId: id, seq: 1, at: now, key: 'log:1', type: 'log', level: 'info', message: 'seeded' }]);
  const home = join(stateDir, 'sessions', id, 'home');
  await mkdir(home, { recursive: true });
  await writeFile(join(home, 'big'), Buffer.alloc(100_000));
  return join(stateDir, 'sessions', id);
}

const jsonLines = (stdout: string): Array<Record<string, unknown>> =>
  stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe('server status and stop', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('reports no orchestrator, then a running one with its pid and load, and stops it', async () => {
    const none = await box.run(['--json', 'server', 'status']);
    expect(none.exitCode).toBe(0);
    expect(jsonLines(none.stdout)).toEqual([expect.objectContaining({ running: false, stateDir })]);
    expect((await box.run(['server', 'status'])).stdout).toContain(`orchestrator of ${stateDir}: not running`);

    const server = await startServer();
    const status = await box.run(['--json', 'server', 'status']);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(jsonLines(status.stdout)).toEqual([
      expect.objectContaining({
        running: true,
        pid: server.pid,
        auto: false,
        live: 0,
        queued: 0,
        otherClients: 0,
        startedAt: expect.any(String),
      }),
    ]);
    const human = await box.run(['server', 'status']);
    expect(human.stdout).toContain(`pid ${server.pid}, started by \`one-works serve\`, since `);

    const stop = await box.run(['server', 'stop']);
    expect(stop.exitCode, stop.stderr).toBe(0);
    expect(stop.stdout).toContain(`stopped the orchestrator of ${stateDir} (pid ${server.pid})`);
    expect((await server.process).exitCode).toBe(0);
    expect(() => process.kill(server.pid, 0)).toThrow();
    expect(existsSync(join(stateDir, 'orchestrator.sock'))).toBe(false);

    const again = await box.run(['--json', 'server', 'stop']);
    expect(jsonLines(again.stdout)).toEqual([{ stopped: false, stateDir }]);
  });
});

describe('sessions archive and rm', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it('lists sessionId (and the old id) in --json; archive hides a session unless --all', async () => {
    await seedSession('s-aaaaaaaaaa', { title: 'kept' });
    await seedSession('s-bbbbbbbbbb');
    const listed = jsonLines((await box.run(['--json', 'sessions'])).stdout);
    expect(listed.map((row) => [row.sessionId, row.id])).toEqual([
      ['s-aaaaaaaaaa', 's-aaaaaaaaaa'],
      ['s-bbbbbbbbbb', 's-bbbbbbbbbb'],
    ]);

    const archive = await box.run(['sessions', 'archive', 's-aaaaaaaaaa']);
    expect(archive.exitCode, archive.stderr).toBe(0);
    expect(jsonLines((await box.run(['--json', 'sessions'])).stdout).map((row) => row.sessionId)).toEqual(['s-bbbbbbbbbb']);
    const all = jsonLines((await box.run(['--json', 'sessions', '--all'])).stdout);
    expect(all.map((row) => [row.sessionId, row.archived])).toEqual([
      ['s-aaaaaaaaaa', true],
      ['s-bbbbbbbbbb', false],
    ]);
    expect((await box.run(['sessions', 'list', '--all'])).stdout).toMatch(/s-aaaaaaaaaa .*"kept" {2}\(archived\)/);

    // Through a running orchestrator too.
    await startServer();
    expect((await box.run(['sessions', 'archive', '--undo', 's-aaaaaaaaaa'])).exitCode).toBe(0);
    expect(jsonLines((await box.run(['--json', 'sessions'])).stdout).map((row) => row.sessionId)).toEqual(['s-aaaaaaaaaa', 's-bbbbbbbbbb']);
  });

  it('rm removes the record, the event log and the session HOME, with or without an orchestrator', async () => {
    const first = await seedSession('s-cccccccccc');
    const second = await seedSession('s-dddddddddd');
    const removed = await box.run(['--json', 'sessions', 'rm', 's-cccccccccc']);
    expect(removed.exitCode, removed.stderr).toBe(0);
    expect(jsonLines(removed.stdout)).toEqual([{ sessionId: 's-cccccccccc', removed: true, freedBytes: expect.any(Number) }]);
    expect((jsonLines(removed.stdout)[0]!.freedBytes as number) >= 100_000).toBe(true);
    expect(existsSync(first)).toBe(false);
    expect(existsSync(join(stateDir, 'owner.json'))).toBe(false);

    await startServer();
    const viaServer = await box.run(['sessions', 'rm', 's-dddddddddd']);
    expect(viaServer.exitCode, viaServer.stderr).toBe(0);
    expect(viaServer.stdout).toContain('removed s-dddddddddd: record, event log and session HOME (');
    expect(existsSync(second)).toBe(false);
    expect(jsonLines((await box.run(['--json', 'sessions'])).stdout)).toEqual([]);

    const missing = await box.run(['sessions', 'rm', 's-dddddddddd']);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain('no session s-dddddddddd');
  });
});

describe('adapters prune', { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  async function version(name: string, bytes: number): Promise<string> {
    const dir = join(cacheDir, 'cli', 'droid', name);
    await mkdir(join(dir, 'bin'), { recursive: true });
    await writeFile(join(dir, 'bin', 'droid'), Buffer.alloc(bytes));
    return dir;
  }

  it('removes versions neither the config nor one-works.lock pins, keeps those, and reports the bytes freed', async () => {
    const pinned = await version('0.225.2', 1_000);
    const locked = await version('0.224.0', 2_000);
    const stale = await version('0.215.0', 300_000);
    const other = join(cacheDir, 'cli', 'droid', 'not-a-version');
    await mkdir(other, { recursive: true });
    await writeFile(
      join(box.cwd, 'one-works.lock'),
      JSON.stringify({
        lockfileVersion: 1,
        adapters: { droid: { '0.224.0': { apiVersion: '1.0.0', protocolVersion: '1.219.0', probedAt: new Date().toISOString() } } },
      }),
    );

    const dry = await box.run(['adapters', 'prune', '--dry-run']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(`would remove droid 0.215.0  300.0 kB  ${stale}`);
    expect(dry.stdout).toContain('would free 300.0 kB (1 version)');
    expect(existsSync(stale)).toBe(true);

    const pruned = await box.run(['--json', 'adapters', 'prune']);
    expect(pruned.exitCode, pruned.stderr).toBe(0);
    const lines = jsonLines(pruned.stdout);
    expect(lines.filter((l) => l.type === 'removed').map((l) => l.version)).toEqual(['0.215.0']);
    expect(lines.filter((l) => l.type === 'kept').map((l) => [l.version, l.keptBecause])).toEqual([
      ['0.224.0', `recorded in ${join(box.cwd, 'one-works.lock')}`],
      ['0.225.2', 'adapters.droid.cli.version'],
    ]);
    expect(lines.at(-1)).toEqual({ type: 'summary', dryRun: false, removed: 1, freedBytes: 300_000 });
    expect([existsSync(stale), existsSync(pinned), existsSync(locked), existsSync(other)]).toEqual([false, true, true, true]);

    expect((await box.run(['adapters', 'prune'])).stdout).toContain('nothing to prune');
  });
});
