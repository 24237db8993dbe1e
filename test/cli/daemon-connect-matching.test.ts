import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Output } from '../../cli/output.js';
import { stringify } from 'yaml';
import { createContext, type CliContext } from '../../cli/context.js';
import type { OrchestratorClient } from '../../cli/daemon/client.js';
import { connectMatchingOrchestrator } from '../../cli/daemon/connect-matching.js';
import { findProcesses, killQuietly, waitForExit } from '../support/rig-processes.js';

// Real auto-started `one-works serve --auto` processes (no session runs, so no droid): the
// client's environment fingerprint decides whether it may use the running one.

const roots: string[] = [];
const clients: OrchestratorClient[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const root of roots.splice(0)) {
    const servers = findProcesses(root).map((p) => p.pid);
    for (const pid of servers) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    for (const pid of await waitForExit(servers, 10_000)) killQuietly(pid);
    await rm(root, { recursive: true, force: true });
  }
});

async function makeRoot(idleExitMs: number): Promise<(env?: Record<string, string>) => Promise<CliContext>> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-match-')));
  roots.push(root);
  const [stateDir, workspace, home] = ['state', 'ws', 'home'].map((name) => join(root, name)) as [string, string, string];
  await Promise.all([mkdir(workspace), mkdir(home)]);
  const config = join(root, 'one-works.yaml');
  await writeFile(
    config,
    stringify({ state: { directory: stateDir }, workspaces: { approved: [workspace] }, orchestrator: { idleExitMs } }),
  );
  return async (env = {}) => ({ ...(await createContext({ config }, { PATH: process.env.PATH ?? '', HOME: home, ...env })), cwd: root });
}

async function connect(ctx: CliContext): Promise<OrchestratorClient> {
  const client = await connectMatchingOrchestrator(ctx);
  clients.push(client);
  return client;
}

describe('connecting to an orchestrator with a matching environment', () => {
  it('replaces an idle auto-started server whose environment differs', async () => {
    const context = await makeRoot(60_000);
    const first = await connect(await context({ LANG: 'C' }));
    const old = (await first.hello()).pid;
    await first.close();
    const second = await connect(await context({ LANG: 'C.UTF-8' }));
    const fresh = await second.hello();
    expect(fresh.pid).not.toBe(old);
    expect(await waitForExit([old], 0)).toEqual([]);
    // The same environment is served by the running one.
    expect((await (await connect(await context({ LANG: 'C.UTF-8' }))).hello()).pid).toBe(fresh.pid);
  }, 60_000);

  it('shares one server between clients whose terminals differ (TERM, COLORTERM, NO_COLOR), without a restart', async () => {
    const context = await makeRoot(60_000);
    const tmux = await connect(await context({ TERM: 'screen-256color', COLORTERM: 'truecolor' }));
    const { pid } = await tmux.hello();
    await tmux.close();
    const messages: string[] = [];
    const xterm = await context({ TERM: 'xterm', NO_COLOR: '1' });
    const out = new Output({ json: false, stdout: new PassThrough(), stderr: new PassThrough() });
    out.info = (text: string) => {
      messages.push(text);
    };
    const second = await connect({ ...xterm, out });
    expect((await second.hello()).pid).toBe(pid);
    expect(messages).toEqual([]);
  }, 60_000);

  it('names the variables and config keys that differ, never their values', async () => {
    const context = await makeRoot(60_000);
    const holder = await connect(await context({ LANG: 'C', FACTORY_API_KEY: 'fk-first-secret-1111' }));
    const refused = connect(await context({ LANG: 'C.UTF-8', FACTORY_API_KEY: 'fk-second-secret-2222' }));
    await expect(refused).rejects.toMatchObject({ code: 'orchestrator_mismatch' });
    const message = await refused.then(
      () => '',
      (error: Error) => error.message,
    );
    expect(message).toContain('it differs in: environment variable LANG; config key adapters.droid.credentials.FACTORY_API_KEY');
    for (const value of ['C.UTF-8', 'fk-first-secret-1111', 'fk-second-secret-2222']) expect(message).not.toContain(value);
    await holder.close();
  }, 60_000);

  it('refuses a busy auto-started server with another environment, naming how to stop it', async () => {
    const context = await makeRoot(60_000);
    const holder = await connect(await context({ LANG: 'C' }));
    const { pid } = await holder.hello();
    const refused = connect(await context({ LANG: 'C.UTF-8' }));
    await expect(refused).rejects.toMatchObject({ code: 'orchestrator_mismatch', message: expect.stringContaining(`kill -TERM ${pid}`) });
    await expect(refused).rejects.toThrow(/it is busy \(0 live and 0 queued turns, 1 other clients\)/);
    expect((await holder.hello()).pid).toBe(pid);
  }, 60_000);

  it('keeps connecting while auto-started servers come and go by idle exit', async () => {
    const context = await makeRoot(20);
    const ctx = await context();
    const pids: number[] = [];
    for (let round = 0; round < 6; round += 1) {
      const client = await connect(ctx);
      pids.push((await client.hello()).pid);
      expect(await client.list()).toEqual([]);
      await client.close();
      // Every other round the next client comes only after this server's idle exit; the other
      // rounds it comes at once, racing the exit (served by this server or by the next one).
      if (round % 2 === 1) expect(await waitForExit([pids.at(-1)!], 10_000)).toEqual([]);
    }
    expect(new Set(pids).size).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
