import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createContext, type CliContext } from '../../cli/context.js';
import { spawnAutoServer } from '../../cli/daemon/auto-start.js';
import { beginMatchingOrchestrator } from '../../cli/daemon/connect-matching.js';
import { logPath, socketPath } from '../../cli/daemon/wire.js';
import { runCli } from '../support/cli-runner.js';
import { findProcesses, killQuietly, waitForExit, waitForNoProcesses } from '../support/rig-processes.js';
import { startOneWorks } from '../support/one-works-cli.js';

// `run` and `send` reach the orchestrator (starting one when none runs) while they make their own
// checks; a check that fails gives the connection up. Real `one-works serve` processes, no session
// runs (so no droid). The idle exit is the default (10 min): a server left behind would stay.

const roots: string[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) {
    const left = findProcesses(root).map((p) => p.pid);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    for (const pid of await waitForExit(left, 10_000)) killQuietly(pid);
    await rm(root, { recursive: true, force: true });
  }
});

interface Root {
  root: string;
  workspace: string;
  config: string;
  env: Record<string, string>;
  context(): Promise<CliContext>;
}

async function makeRoot(): Promise<Root> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-early-')));
  roots.push(root);
  const [stateDir, workspace, home] = ['state', 'ws', 'home'].map((name) => join(root, name)) as [string, string, string];
  await Promise.all([mkdir(workspace), mkdir(home)]);
  const config = join(root, 'one-works.yaml');
  await writeFile(config, stringify({ state: { directory: stateDir }, workspaces: { approved: [workspace] } }));
  const env = { PATH: process.env.PATH ?? '', HOME: home };
  return { root, workspace, config, env, context: async () => ({ ...(await createContext({ config }, env)), cwd: root }) };
}

const servers = (root: string): number[] =>
  findProcesses(root)
    .filter((p) => / serve( |$)/.test(p.args))
    .map((p) => p.pid);

describe('a connection begun before the command checks', () => {
  it('starts no server when it is given up before one was needed', async () => {
    const { root, context } = await makeRoot();
    const ctx = await context();
    const pending = beginMatchingOrchestrator(ctx);
    // Given up at once, before its first connect attempt found no server: nothing is started.
    await pending.abandon();
    await expect(pending.client).rejects.toMatchObject({ code: 'request_cancelled' });
    expect(servers(root)).toEqual([]);
    expect(existsSync(logPath(ctx.stateDir))).toBe(false);
  });

  it('asks the server it started to exit when it is given up, and the server says why', async () => {
    const { root, context } = await makeRoot();
    const ctx = await context();
    const pending = beginMatchingOrchestrator(ctx);
    const { pid } = (await pending.client).server();
    expect(servers(root)).toEqual([pid]);
    await pending.abandon();
    expect(await waitForExit([pid!], 15_000)).toEqual([]);
    expect(existsSync(socketPath(ctx.stateDir))).toBe(false);
    expect(await readFile(logPath(ctx.stateDir), 'utf8')).toMatch(
      /orchestrator stopping \(the command that started it failed its own checks and asked the unused server to exit\)/,
    );
  }, 60_000);

  it('says when its first attempt is decided: a server started (before it serves), or one that accepted', async () => {
    const { root, context } = await makeRoot();
    const ctx = await context();
    const pending = beginMatchingOrchestrator(ctx);
    await pending.attempted;
    // The server is spawned by then (the command's checks come after this).
    const [spawned] = servers(root);
    expect(spawned).toBeTypeOf('number');
    const client = await pending.client;
    expect(client.server().pid).toBe(spawned);
    await client.close();
    // With the server up, the attempt is decided when it accepts the connection.
    const again = beginMatchingOrchestrator(ctx);
    await again.attempted;
    expect(servers(root)).toEqual([spawned]);
    await again.abandon();
    await pending.abandon();
  }, 60_000);

  it('waits for a server the command started before (a run’s early bundle did), starts none of its own, and asks it to exit when given up', async () => {
    const { root, context } = await makeRoot();
    const ctx = await context();
    const spawned = spawnAutoServer(ctx);
    const pending = beginMatchingOrchestrator(ctx, { spawned });
    expect((await pending.client).server().pid).toBe(spawned.pid);
    expect(servers(root)).toEqual([spawned.pid]);
    await pending.abandon();
    expect(await waitForExit([spawned.pid!], 15_000)).toEqual([]);
    expect(await readFile(logPath(ctx.stateDir), 'utf8')).toMatch(/asked the unused server to exit/);
  }, 60_000);

  it('given up before that server serves, still waits for it and asks it to exit', async () => {
    const { root, context } = await makeRoot();
    const ctx = await context();
    const spawned = spawnAutoServer(ctx);
    const pending = beginMatchingOrchestrator(ctx, { spawned });
    await pending.abandon();
    expect(await waitForExit([spawned.pid!], 15_000)).toEqual([]);
    expect(servers(root)).toEqual([]);
    expect(existsSync(socketPath(ctx.stateDir))).toBe(false);
  }, 60_000);

  it('leaves a server it did not start running when it is given up', async () => {
    const { root, config, env, context } = await makeRoot();
    const ctx = await context();
    const serve = startOneWorks(['--config', config, 'serve'], { cwd: root, env });
    await expect.poll(() => existsSync(socketPath(ctx.stateDir)), { timeout: 30_000 }).toBe(true);
    const pending = beginMatchingOrchestrator(ctx);
    expect((await pending.client).server().pid).toBe(serve.pid);
    await pending.abandon();
    // Still serving: a new connection is answered by the same process.
    const again = beginMatchingOrchestrator(ctx);
    const client = await again.client;
    expect(client.server().pid).toBe(serve.pid);
    expect(await client.list()).toEqual([]);
    await client.close();
    serve.kill('SIGTERM');
    expect((await serve.result).exitCode).toBe(0);
  }, 60_000);
});

describe('a connection given up while a server does not answer', () => {
  it('is dropped at once instead of waiting for the server to be found unresponsive', async () => {
    const { root, config, env, context } = await makeRoot();
    const ctx = await context();
    const serve = startOneWorks(['--config', config, 'serve'], { cwd: root, env });
    await expect.poll(() => existsSync(socketPath(ctx.stateDir)), { timeout: 30_000 }).toBe(true);
    serve.kill('SIGSTOP');
    try {
      const pending = beginMatchingOrchestrator(ctx);
      // The stopped server's socket still accepts (the kernel's backlog); its hello never comes.
      await pending.attempted;
      await pending.abandon();
      // Given up, not found unresponsive (orchestrator_unavailable, after the client's ping deadline).
      await expect(pending.client).rejects.toMatchObject({ code: 'request_cancelled' });
      expect(servers(root)).toEqual([serve.pid]);
    } finally {
      serve.kill('SIGCONT');
      serve.kill('SIGTERM');
    }
    expect((await serve.result).exitCode).toBe(0);
  }, 60_000);
});

describe('run refused by its own checks', () => {
  it('says why and leaves no orchestrator behind', async () => {
    const { root, config, env } = await makeRoot();
    const outside = join(root, 'elsewhere');
    await mkdir(outside);
    const refused = await runCli(['--config', config, 'run', '--workspace', outside, 'hello'], { cwd: root, env });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain(`workspace ${outside} is not inside an approved root`);
    // Whether or not the command had started a server before its check failed, none is left.
    expect(await waitForNoProcesses(() => findProcesses(root), 15_000)).toEqual([]);
    expect(existsSync(socketPath(join(root, 'state')))).toBe(false);
  }, 60_000);

  it('names a symlinked workspace and its real path when the real path is outside the approved roots', async () => {
    const { root, workspace, config, env } = await makeRoot();
    const outside = join(root, 'elsewhere');
    await mkdir(outside);
    // Inside the approved workspace by its name, outside it by its real path.
    const link = join(workspace, 'link');
    await symlink(outside, link);
    const refused = await runCli(['--config', config, 'run', '--workspace', link, 'hello'], { cwd: root, env });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toContain(`workspace ${link} (really ${outside}) is not inside an approved root`);
    expect(await waitForNoProcesses(() => findProcesses(root), 15_000)).toEqual([]);
  }, 60_000);

  it('checks -m/-e/-a with the adapter schema, naming the flag', async () => {
    const { root, workspace, config, env } = await makeRoot();
    const refused = await runCli(['--config', config, 'run', '--workspace', workspace, '-a', 'reckless', 'hello'], { cwd: root, env });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/--autonomy: .*"off"/);
    expect(await waitForNoProcesses(() => findProcesses(root), 15_000)).toEqual([]);
  }, 60_000);
});
