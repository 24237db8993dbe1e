import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { connectOrchestrator } from '../../cli/daemon/client.js';
import { logPath, socketPath } from '../../cli/daemon/wire.js';
import { type DaemonRoot, useDaemonRoots } from '../support/daemon-roots.js';
import { findProcesses, waitForExit } from '../support/rig-processes.js';
import { startOneWorks } from '../support/one-works-cli.js';

// Real `one-works serve --auto` processes, started by the client as users get them. No session
// runs here (no adapter is prepared), so no droid is needed.

const { clients, makeRoot: makeDaemonRoot } = useDaemonRoots('ow-daemon-');
const makeRoot = (idleExitMs: number): Promise<DaemonRoot> => makeDaemonRoot({ idleExitMs });

async function until(check: () => boolean): Promise<void> {
  while (!check()) await sleep(50);
}

const servers = (root: string): number[] =>
  findProcesses(root)
    .filter((p) => / serve( |$)/.test(p.args))
    .map((p) => p.pid);

describe('auto-started orchestrator', () => {
  it('two clients starting at once share one server, which refuses a second serve and exits when idle', async () => {
    const { root, ctx } = await makeRoot(500);
    const both = await Promise.all([connectOrchestrator(ctx, { autoStart: true }), connectOrchestrator(ctx, { autoStart: true })]);
    clients.push(...both);
    // The race's loser (if both clients spawned one) exits by itself; one server is left.
    await until(() => servers(root).length === 1);
    const [server, ...others] = servers(root);
    expect(server).toBeTypeOf('number');
    expect(others).toEqual([]);
    expect((await stat(socketPath(ctx.stateDir))).mode & 0o777).toBe(0o600);
    expect((await stat(logPath(ctx.stateDir))).mode & 0o777).toBe(0o600);
    // Both clients talk to it: the same (empty) list, and codes come through.
    expect(await both[0]!.list()).toEqual([]);
    expect(await both[1]!.list()).toEqual([]);
    await expect(both[1]!.status('s-none')).rejects.toMatchObject({ code: 'session_not_found' });

    // A second, explicit server on the same state directory is refused.
    const second = await startOneWorks(['--config', ctx.configPath!, 'serve'], { cwd: root, env: ctx.env as Record<string, string> })
      .result;
    expect(second.exitCode).toBe(6);
    expect(second.stderr).toMatch(/in use by One Works pid/);

    // Without clients (and turns), the auto-started server exits by itself and removes its socket.
    for (const client of clients.splice(0)) await client.close();
    expect(await waitForExit([server!], 15_000)).toEqual([]);
    // waitForExit counts a zombie as exited; the pid is gone (ESRCH) once init has reaped it.
    await expect.poll(() => signalZeroCode(server!), { timeout: 10_000 }).toBe('ESRCH');
    await expect(stat(socketPath(ctx.stateDir))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(findProcesses(root)).toEqual([]);
  }, 60_000);

  it('an explicit serve stays up without clients and exits 0 on SIGTERM, removing its socket and owner file', async () => {
    const { root, ctx } = await makeRoot(50);
    const started = startOneWorks(['--config', ctx.configPath!, 'serve'], { cwd: root, env: ctx.env as Record<string, string> });
    await until(() => existsSync(socketPath(ctx.stateDir)));
    const client = await connectOrchestrator(ctx, { autoStart: false });
    expect(await client.list()).toEqual([]);
    await client.close();
    // idleExitMs (50 ms) applies to auto-started servers only: this one is still serving.
    await sleep(500);
    const again = await connectOrchestrator(ctx, { autoStart: false });
    await again.close();
    started.kill('SIGTERM');
    const result = await started.result;
    expect(result.exitCode).toBe(0);
    expect(result.stderr).toMatch(/orchestrator stopping \(SIGTERM\)/);
    expect(existsSync(socketPath(ctx.stateDir))).toBe(false);
    expect(existsSync(join(ctx.stateDir, 'owner.json'))).toBe(false);
    expect(() => process.kill(started.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  }, 60_000);

  it('without autoStart and without a server, connecting fails with connection_closed', async () => {
    const { root, ctx } = await makeRoot(500);
    await expect(connectOrchestrator(ctx, { autoStart: false })).rejects.toMatchObject({ code: 'connection_closed' });
    expect(servers(root)).toEqual([]);
  });
});

// The error code of `kill(pid, 0)`, or 'alive' when the signal could be sent.
function signalZeroCode(pid: number): string {
  try {
    process.kill(pid, 0);
    return 'alive';
  } catch (error) {
    return String((error as NodeJS.ErrnoException).code);
  }
}
