import { request } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startMcpHttpServer, type McpHttpServer } from '../../../cli/mcp/http-server.js';
import { createMcpServer } from '../../../cli/mcp/mcp-server.js';
import { FakeOrchestrator } from './fake-orchestrator.js';

const TOKEN = 'k'.repeat(48);
let server: McpHttpServer | undefined;
let logs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  logs = [];
});

async function start(createServer?: () => ReturnType<typeof createMcpServer>, allowOrigins: string[] = []): Promise<McpHttpServer> {
  const fake = new FakeOrchestrator();
  fake.add({ sessionId: 's-1' });
  server = await startMcpHttpServer({
    address: { bindHost: '127.0.0.1', port: 0 },
    token: TOKEN,
    allowOrigins,
    createServer:
      createServer ??
      (() =>
        createMcpServer({
          orchestrator: { use: (call) => call(fake) },
          version: '0',
          redact: (t) => t.replaceAll(TOKEN, '[REDACTED]'),
          log: (l) => logs.push(l),
        })),
    log: (line) => logs.push(line.replaceAll(TOKEN, '[REDACTED]')),
  });
  return server;
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

// A raw HTTP exchange; `body` may be a string or a generator of chunks (sent chunked).
function send(
  port: number,
  options: { method?: string; headers?: Record<string, string>; body?: string | Iterable<string> },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/mcp',
        method: options.method ?? 'POST',
        headers: { host: `127.0.0.1:${port}`, ...options.headers },
      },
      (res) => {
        answered = true;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    // After a response, a write the server no longer reads may fail (EPIPE); the reply is what counts.
    req.on('error', (error) => (answered ? undefined : reject(error)));
    if (typeof options.body === 'string' || options.body === undefined) req.end(options.body);
    else {
      // Written without waiting for drain: the server may answer (and close) before taking it all.
      for (const chunk of options.body) req.write(chunk);
      req.end();
    }
  });
}

const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
});

describe('MCP over Streamable HTTP', () => {
  it('serves a real SDK client that presents the bearer token (stateless: no session id)', async () => {
    const { url } = await start();
    const client = new Client({ name: 't', version: '0' });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } });
    await client.connect(transport);
    try {
      expect(transport.sessionId).toBeUndefined();
      expect((await client.listTools()).tools).toHaveLength(18);
      expect((await client.callTool({ name: 'session_status', arguments: { session: 's-1' } })).structuredContent).toMatchObject({
        sessionId: 's-1',
      });
    } finally {
      await client.close();
    }
  });

  it('refuses a client without the token or with a wrong one (401), never reaching the MCP server', async () => {
    let created = 0;
    const { url, port } = await start(() => {
      created += 1;
      throw new Error('not reached');
    });
    for (const headers of [
      {} as Record<string, string>,
      { Authorization: `Bearer ${'k'.repeat(47)}` },
      { Authorization: `Bearer ${TOKEN}k` },
    ]) {
      const client = new Client({ name: 't', version: '0' });
      await expect(client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))).rejects.toMatchObject({
        code: 401,
      });
    }
    const raw = await send(port, { headers: { ...auth, authorization: 'Bearer nope' }, body: initialize });
    expect(raw).toMatchObject({ status: 401, headers: { 'www-authenticate': 'Bearer realm="one-works"' } });
    expect(created).toBe(0);
  });

  it('refuses a body over 1 MiB with 413, declared or streamed', async () => {
    const { port } = await start();
    const big = `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"${'x'.repeat(1024 * 1024)}"}}`;
    expect((await send(port, { headers: auth, body: big })).status).toBe(413);
    function* chunks(): Generator<string> {
      for (let i = 0; i < 40; i += 1) yield 'y'.repeat(64 * 1024);
    }
    expect((await send(port, { headers: { ...auth, 'transfer-encoding': 'chunked' }, body: chunks() })).status).toBe(413);
  });

  it('answers malformed JSON with 400, GET and DELETE with 405, a foreign Origin or Host with 403', async () => {
    const { port } = await start();
    const malformed = await send(port, { headers: auth, body: '{"jsonrpc": "2.0", "id": 1,' });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body)).toMatchObject({ error: { code: -32700 } });
    expect((await send(port, { headers: auth, body: '{"not":"json-rpc"}' })).status).toBe(400);
    for (const method of ['GET', 'DELETE'])
      expect(await send(port, { method, headers: auth })).toMatchObject({ status: 405, headers: { allow: 'POST' } });
    expect((await send(port, { headers: { ...auth, origin: 'http://evil.example' }, body: initialize })).status).toBe(403);
    expect((await send(port, { headers: { ...auth, host: `evil.example:${port}` }, body: initialize })).status).toBe(403);
    expect((await send(port, { headers: { ...auth, origin: `http://localhost:${port}` }, body: initialize })).status).toBe(200);
  });

  it('answers an unexpected failure with a generic 500 and keeps the details, redacted, in the local log', async () => {
    const { port } = await start(() => {
      throw new Error(`exploded near ${TOKEN}`);
    });
    const reply = await send(port, { headers: auth, body: initialize });
    expect(reply.status).toBe(500);
    expect(JSON.parse(reply.body)).toEqual({ error: 'internal error' });
    expect(logs.join('\n')).toContain('exploded near [REDACTED]');
    expect(logs.join('\n')).not.toContain(TOKEN);
  });

  it('answers 503 when a call outlives the handling deadline, and keeps serving', async () => {
    const fake = new FakeOrchestrator();
    fake.add({ sessionId: 's-1' });
    const hung = { ...fake, status: () => new Promise<never>(() => undefined), info: () => fake.info() } as unknown as FakeOrchestrator;
    server = await startMcpHttpServer({
      address: { bindHost: '127.0.0.1', port: 0 },
      token: TOKEN,
      allowOrigins: [],
      createServer: () =>
        createMcpServer({ orchestrator: { use: (call) => call(hung) }, version: '0', redact: (t) => t, log: (l) => logs.push(l) }),
      log: (line) => logs.push(line),
      handlingTimeoutMs: 200,
    });
    const callTool = (name: string, args: object): string =>
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name, arguments: args } });
    const stuck = await send(server.port, { headers: auth, body: callTool('session_status', { session: 's-1' }) });
    expect([stuck.status, JSON.parse(stuck.body)]).toEqual([503, { error: 'request timed out' }]);
    const fine = await send(server.port, { headers: auth, body: callTool('list_workspaces', {}) });
    expect(fine.status).toBe(200);
    expect(JSON.parse(fine.body)).toMatchObject({ id: 2, result: { structuredContent: { approvedRoots: ['/ws'] } } });
  });

  it('lets a browser on an --allow-origin origin through: preflight without the token, then a POST whose answer names the origin', async () => {
    const app = 'http://app.example:3000';
    const { port } = await start(undefined, [app]);
    const pre = await send(port, {
      method: 'OPTIONS',
      headers: { origin: app, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(pre).toMatchObject({
      status: 204,
      body: '',
      headers: {
        'access-control-allow-origin': app,
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': expect.stringContaining('authorization'),
        'access-control-max-age': expect.stringMatching(/^\d+$/),
        vary: 'Origin',
      },
    });
    const posted = await send(port, { headers: { ...auth, origin: app }, body: initialize });
    expect(posted).toMatchObject({ status: 200, headers: { 'access-control-allow-origin': app, vary: 'Origin' } });
    const unauthenticated = await send(port, { headers: { origin: app, 'content-type': 'application/json' }, body: initialize });
    expect(unauthenticated).toMatchObject({ status: 401, headers: { 'access-control-allow-origin': app } });
    const foreign = await send(port, {
      method: 'OPTIONS',
      headers: { origin: 'http://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(foreign.status).toBe(403);
    expect(foreign.headers['access-control-allow-origin']).toBeUndefined();
    const plain = await send(port, { headers: auth, body: initialize });
    expect(plain.headers['access-control-allow-origin']).toBeUndefined();
  });
});
