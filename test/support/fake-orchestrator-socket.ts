import { createServer, type Server, type Socket } from 'node:net';
import { COMMAND_MATCHED, COMMAND_OUTPUT, COMMAND_RUN, COMMAND_TURN } from '../../cli/daemon/command-methods.js';

/**
 * A stand-in for an orchestrator's control socket at `path`, for tests of how `run` reaches it
 * (cli/early-intent.ts): records every frame of every connection and answers each request, with
 * `hello` from `options.hello` (default: an empty object), `command.run` as `options.commandRun`
 * says (default: `{}`, which a client reads as declined) and `{}` for what it does not know.
 * The caller closes `server`.
 */
export interface FakeOrchestrator {
  connections: Array<Array<{ id?: string; method?: string; params?: Record<string, unknown> }>>;
  closed: number;
  server: Server;
}

/** How the fake runs a handed command: matched (told before any output), what it prints on stdout, its exit code. */
export interface FakeCommandRun {
  output: string;
  exitCode: number;
  /** Told as `command.turn` after the output. */
  turn?: { sessionId: string; runId: string; pid: number };
  /** Closes the connection after the output (and turn) instead of answering: the orchestrator went away. */
  close?: boolean;
}

export async function fakeOrchestrator(
  path: string,
  options: { hello?: Record<string, unknown>; commandRun?: FakeCommandRun } = {},
): Promise<FakeOrchestrator> {
  const fake: FakeOrchestrator = { connections: [], closed: 0, server: createServer() };
  fake.server.on('connection', (socket: Socket) => {
    const frames: FakeOrchestrator['connections'][number] = [];
    fake.connections.push(frames);
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += String(chunk);
      for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
        const frame = JSON.parse(buffer.slice(0, end)) as { id?: string; method?: string; params?: Record<string, unknown> };
        buffer = buffer.slice(end + 1);
        frames.push(frame);
        const run = frame.method === COMMAND_RUN ? options.commandRun : undefined;
        if (run) {
          socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: COMMAND_MATCHED, params: {} })}\n`);
          socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: COMMAND_OUTPUT, params: { stream: 'stdout', text: run.output } })}\n`);
          if (run.turn) socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: COMMAND_TURN, params: run.turn })}\n`);
          if (run.close) {
            socket.end();
            return;
          }
        }
        const result = run
          ? { exitCode: run.exitCode }
          : frame.method === 'intent'
            ? { intentId: 's-0000000001' }
            : frame.method === 'intent.drop'
              ? { dropped: true }
              : frame.method === 'hello'
                ? (options.hello ?? {})
                : {};
        socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: frame.id, result })}\n`);
      }
    });
    socket.on('close', () => {
      fake.closed += 1;
    });
  });
  await new Promise<void>((resolve) => fake.server.listen(path, resolve));
  return fake;
}

/** Resolves once `check` holds (polled every 10 ms); throws after 5 s. */
export async function until(check: () => boolean): Promise<void> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('condition not met within 5 s');
}
