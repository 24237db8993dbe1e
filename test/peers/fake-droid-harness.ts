import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { startRawDroid } from '../support/raw-droid-client.js';
import type { RawDroidClient } from '../support/raw-droid-client.js';
import { FAKE_DROID_WRAPPER } from './fake-droid-binary.js';

/** Temp HOME and workspace for one fake droid run; `dispose()` removes both. */
export interface FakeDroidDirs {
  home: string;
  workspace: string;
  dispose(): Promise<void>;
}

export async function makeDirs(): Promise<FakeDroidDirs> {
  const root = await mkdtemp(join(tmpdir(), 'fake-droid-'));
  const home = join(root, 'home');
  const workspace = join(root, 'ws');
  await Promise.all([mkdir(home), mkdir(workspace)]);
  return { home, workspace, dispose: () => rm(root, { recursive: true, force: true }) };
}

/**
 * Starts fake droids through the raw client and, on `closeAll()`, kills every one and asserts
 * its pid is gone (ESRCH).
 */
export class FakeDroidFleet {
  #clients: RawDroidClient[] = [];

  async start(dirs: FakeDroidDirs, env: Record<string, string> = {}, binary = FAKE_DROID_WRAPPER): Promise<RawDroidClient> {
    const client = await startRawDroid({ binary, cwd: dirs.workspace, home: dirs.home, env });
    this.#clients.push(client);
    return client;
  }

  async closeAll(): Promise<void> {
    const clients = this.#clients.splice(0);
    await Promise.all(clients.map((client) => client.close({ graceMs: 1000 })));
    for (const client of clients) expectGone(client.pid);
  }
}

/** Asserts that no process with `pid` exists any more. */
export function expectGone(pid: number): void {
  let code: string | undefined;
  try {
    process.kill(pid, 0);
  } catch (error) {
    code = (error as NodeJS.ErrnoException).code;
  }
  expect(code).toBe('ESRCH');
}

/** Initialises a session the way the captures' preamble does; resolves with the result. */
export async function initialize(client: RawDroidClient, cwd: string): Promise<Record<string, unknown>> {
  return (await client.request('droid.initialize_session', { machineId: 'm1', cwd })) as Record<string, unknown>;
}
