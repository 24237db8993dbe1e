import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { connectOrchestrator } from '../../cli/daemon/client.js';
import { socketPath } from '../../cli/daemon/wire.js';

// A server that is stopping (an idle exit) may have a connection accepted by the kernel just
// before it closes its socket: that connection closes unanswered. connectOrchestrator confirms a
// connection with `hello` before handing it to a command, so such a server counts as none (the
// command starts or finds a new one) instead of failing the command's first call with
// connection_closed. Here a socket that accepts and closes every connection stands for it.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function closingServer(stateDir: string): Promise<{ accepted: () => number }> {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath(stateDir), () => resolve());
  });
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { accepted: () => accepted };
}

describe('connectOrchestrator and a server that closes connections unanswered', () => {
  it('treats it as no server: without auto-start, the "no orchestrator is running" error, not a dead client', async () => {
    const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-closing-')));
    cleanups.push(() => rm(root, { recursive: true, force: true }));
    const stateDir = join(root, 'state');
    await mkdir(stateDir);
    const server = await closingServer(stateDir);
    const ctx = { stateDir, configPath: undefined, cwd: root, env: { PATH: process.env.PATH ?? '' } };
    const error = await connectOrchestrator(ctx as never, { autoStart: false }).then(
      async (client) => {
        await client.close();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(server.accepted()).toBe(1);
    expect(error).toMatchObject({ code: 'connection_closed' });
    expect((error as Error).message).toContain('no orchestrator is running');
  });
});
