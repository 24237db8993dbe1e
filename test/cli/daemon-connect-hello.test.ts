import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createContext } from '../../cli/context.js';
import { connectMatchingOrchestrator } from '../../cli/daemon/connect-matching.js';
import { environmentFingerprint } from '../../cli/daemon/fingerprint.js';
import { socketPath } from '../../cli/daemon/wire.js';

// `run` and `send` connect through connectMatchingOrchestrator: connectOrchestrator confirms the
// connection with a `hello`, and the fingerprint check needs a hello too. One answers both: the
// command's turn is submitted after one round trip, not two. A socket server that speaks the
// control protocol and counts the requests it gets stands for the orchestrator.

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

// Answers `hello` with `fingerprint` and records every method asked, in order.
async function helloServer(stateDir: string, fingerprint: string): Promise<{ methods: string[] }> {
  const methods: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    createInterface({ input: socket }).on('line', (line) => {
      const request = JSON.parse(line) as { id: string; method: string };
      methods.push(request.method);
      const result = request.method === 'hello' ? { fingerprint, auto: false, pid: process.pid, clients: 1, live: 0, queued: 0 } : null;
      socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: request.id, result })}\n`);
    });
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
  return { methods };
}

// A context whose config has a state directory and one approved workspace, in a removed-after temp dir.
async function helloContext(): Promise<{ ctx: Awaited<ReturnType<typeof createContext>>; stateDir: string }> {
  const root = await realpath(await mkdtemp(join(tmpdir(), 'ow-hello-')));
  cleanups.push(() => rm(root, { recursive: true, force: true }));
  const [stateDir, workspace] = [join(root, 'state'), join(root, 'ws')];
  await Promise.all([mkdir(stateDir), mkdir(workspace)]);
  const config = join(root, 'one-works.yaml');
  await writeFile(config, stringify({ state: { directory: stateDir }, workspaces: { approved: [workspace] } }));
  const ctx = { ...(await createContext({ config }, { PATH: process.env.PATH ?? '', HOME: root })), cwd: root };
  return { ctx, stateDir };
}

describe('connecting run and send to a matching orchestrator', () => {
  it('asks the server hello once: the hello that confirmed the connection is the one the fingerprint is checked on', async () => {
    const { ctx, stateDir } = await helloContext();
    const server = await helloServer(stateDir, environmentFingerprint(ctx));

    const client = await connectMatchingOrchestrator(ctx);
    try {
      expect(server.methods).toEqual(['hello']);
      expect(client.greeting).toMatchObject({ pid: process.pid, fingerprint: environmentFingerprint(ctx) });
      // A later hello is asked anew (it reports the server's load now).
      await client.hello();
      expect(server.methods).toEqual(['hello', 'hello']);
    } finally {
      await client.close();
    }
  });

  it('takes many calls at once without a listener-leak warning (an MCP server or a busy script sends them)', async () => {
    const { ctx, stateDir } = await helloContext();
    await helloServer(stateDir, environmentFingerprint(ctx));
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const client = await connectMatchingOrchestrator(ctx);
    try {
      const answers = await Promise.all(Array.from({ length: 25 }, () => client.hello()));
      expect(answers).toHaveLength(25);
      // Node emits the warning on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    } finally {
      process.off('warning', onWarning);
      await client.close();
    }
  });
});
