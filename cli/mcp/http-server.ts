import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ERROR_CODES, OneWorksError } from '../../core/errors.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { checkRequest, corsHeaders, MCP_PATH, type GuardConfig } from './http-guard.js';
import type { ListenAddress } from './http-options.js';
import { HANDLING_TIMEOUT_MS, HEADERS_TIMEOUT_MS, MAX_BODY_BYTES, REQUEST_TIMEOUT_MS } from './limits.js';

export interface McpHttpOptions {
  address: ListenAddress;
  token: string;
  allowOrigins: readonly string[];
  /** A fresh MCP server for one request; closed when the request ends. */
  createServer: () => Server;
  /** The local log (stderr), redacted by the caller. */
  log: (line: string) => void;
  /** Longest time to answer one request (default HANDLING_TIMEOUT_MS: a full 60 s wait plus a margin). */
  handlingTimeoutMs?: number;
}

/** A listening MCP HTTP server. */
export interface McpHttpServer {
  /** `http://HOST:PORT/mcp`. */
  url: string;
  port: number;
  /** Stops accepting, ends open connections and resolves once the server is closed. */
  close(): Promise<void>;
}

/**
 * Serves MCP as stateless Streamable HTTP on a loopback address: every POST /mcp gets a fresh
 * MCP server and transport (no session id; JSON responses). Each request passes
 * {@link checkRequest} (Host, Origin, CORS preflight, bearer token, path, method) before its body
 * is read, and responses to an approved Origin carry its CORS headers ({@link corsHeaders}); the
 * body is capped at 1 MiB (413, not read further), must be JSON (400), and the whole request is
 * answered within `handlingTimeoutMs` (503 otherwise). An unexpected failure is a generic 500
 * whose details go to `log` only.
 */
export async function startMcpHttpServer(options: McpHttpOptions): Promise<McpHttpServer> {
  const guard: GuardConfig = { port: options.address.port, token: options.token, allowOrigins: options.allowOrigins };
  const http = createServer((req, res) => {
    handle(req, res, guard, options).catch((error: unknown) => {
      options.log(`request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  http.headersTimeout = HEADERS_TIMEOUT_MS;
  http.requestTimeout = REQUEST_TIMEOUT_MS;
  await listen(http, options.address);
  const port = (http.address() as AddressInfo).port;
  guard.port = port;
  const host = options.address.bindHost.includes(':') ? `[${options.address.bindHost}]` : options.address.bindHost;
  return {
    url: `http://${host}:${port}${MCP_PATH}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, guard: GuardConfig, options: McpHttpOptions): Promise<void> {
  // Set before anything is written: writeHead (ours or the SDK transport's) merges them in.
  for (const [name, value] of Object.entries(corsHeaders(req.headers, guard))) res.setHeader(name, value);
  const answer = checkRequest(req, guard);
  if (answer?.body) return refuse(req, res, answer.status, answer.body, answer.headers);
  if (answer) {
    // A CORS preflight: no body either way.
    res.writeHead(answer.status, answer.headers ?? {});
    res.end();
    return;
  }
  const body = await readBody(req);
  if (body === undefined) return refuse(req, res, 413, { error: `request body larger than ${MAX_BODY_BYTES} bytes` });
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    return sendJson(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error: the body is not JSON' } });
  }
  const server = options.createServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const deadline = setTimeout(() => {
    if (!res.headersSent) sendJson(res, 503, { error: 'request timed out' });
    else res.destroy();
  }, options.handlingTimeoutMs ?? HANDLING_TIMEOUT_MS);
  res.on('close', () => {
    clearTimeout(deadline);
    void transport.close().catch(() => undefined);
    void server.close().catch(() => undefined);
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, message);
}

// Reads the body as UTF-8; undefined once it exceeds the cap (declared or observed), reading stops there.
function readBody(req: IncomingMessage): Promise<string | undefined> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        req.off('data', onData);
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

// A refusal ends the connection when the request body was left unread, so it is never read.
function refuse(req: IncomingMessage, res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const unread = !req.complete;
  sendJson(res, status, body, unread ? { ...headers, Connection: 'close' } : headers);
  if (unread) res.once('finish', () => req.socket.destroySoon());
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

// A port in use or an address that cannot be bound is the user's choice of --http: a usage error.
const LISTEN_ERRORS: Record<string, string> = {
  EADDRINUSE: 'the port is already in use',
  EACCES: 'binding this port is not permitted',
  EADDRNOTAVAIL: 'this address is not one of this machine',
};

function listen(http: HttpServer, address: ListenAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => {
      const why = LISTEN_ERRORS[error.code ?? ''];
      if (why === undefined) return reject(error);
      reject(
        new OneWorksError(
          ERROR_CODES.USAGE,
          `cannot serve MCP on ${address.bindHost}:${address.port}: ${why} (${error.code}); choose another --http address or port`,
          { data: { code: error.code }, cause: error },
        ),
      );
    });
    http.listen(address.port, address.bindHost, () => {
      http.off('error', reject);
      resolve();
    });
  });
}
