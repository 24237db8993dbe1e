import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { stringify } from 'yaml';
import type { connectOrchestrator, OrchestratorClient } from '../../cli/daemon/client.js';
import { findProcesses, killQuietly } from './rig-processes.js';

/** What `connectOrchestrator` connects with: the state directory, config, cwd and environment of a root. */
export type DaemonCtx = Parameters<typeof connectOrchestrator>[0];

/** A temporary root and the client context that uses it. */
export interface DaemonRoot {
  root: string;
  ctx: DaemonCtx;
}

/**
 * Temporary roots for tests of real `one-works serve` processes that a client starts (no session
 * runs, so no agent is needed). Registers an `afterEach` that closes the clients pushed to
 * `clients`, kills every process still running under a root, and removes the roots.
 * `makeRoot` writes `<root>/one-works.yaml` (state directory `<root>/state`, the one approved
 * workspace `<root>/ws`, `orchestrator.idleExitMs`) and makes `<root>/ws` and `<root>/home`; the
 * context's environment is PATH, HOME=`<root>/home` and `env`. `prefix` names the directories.
 */
export function useDaemonRoots(prefix: string): {
  clients: OrchestratorClient[];
  makeRoot(options: { idleExitMs: number; env?: Record<string, string> }): Promise<DaemonRoot>;
} {
  const roots: string[] = [];
  const clients: OrchestratorClient[] = [];
  afterEach(async () => {
    for (const client of clients.splice(0)) await client.close();
    for (const root of roots.splice(0)) {
      for (const left of findProcesses(root)) killQuietly(left.pid);
      await rm(root, { recursive: true, force: true });
    }
  });
  const makeRoot = async ({ idleExitMs, env = {} }: { idleExitMs: number; env?: Record<string, string> }): Promise<DaemonRoot> => {
    const root = await realpath(await mkdtemp(join(tmpdir(), prefix)));
    roots.push(root);
    const [stateDir, workspace, home] = ['state', 'ws', 'home'].map((name) => join(root, name)) as [string, string, string];
    await Promise.all([mkdir(workspace), mkdir(home)]);
    const configPath = join(root, 'one-works.yaml');
    await writeFile(
      configPath,
      stringify({ state: { directory: stateDir }, workspaces: { approved: [workspace] }, orchestrator: { idleExitMs } }),
    );
    return { root, ctx: { stateDir, configPath, cwd: root, env: { PATH: process.env.PATH ?? '', HOME: home, ...env } } };
  };
  return { clients, makeRoot };
}
