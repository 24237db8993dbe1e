import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** An HTTP server on 127.0.0.1 (a free port) whose `close` also ends every open connection. */
export interface LoopbackServer {
  port: number;
  /** Stops listening, destroys open sockets (ending hangs and delays), resolves once closed. */
  close(): Promise<void>;
}

/** Starts a loopback HTTP server for a scripted model; a handler that throws destroys its response. */
export async function listenLoopback(handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>): Promise<LoopbackServer> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}
