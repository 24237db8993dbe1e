import { chmod, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { CliRigs, type CliRig } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import {
  MCP_RIG_DROID,
  MCP_RIG_ORCHESTRATOR,
  MCP_SCRIPT,
  exerciseTools,
  expectReaped,
  freePort,
  nativeIds,
  stopOrchestrator,
} from './mcp-e2e-support.js';
import { until } from './orchestrator-rig.js';

// `one-works mcp --http 127.0.0.1:PORT --token-file F`, driven by the real MCP SDK client over
// Streamable HTTP, with the real droid and a scripted model behind the auto-started orchestrator.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

const TOKEN = 'f3b1c9d2e4a6b8c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6';

async function tokenFile(rig: CliRig): Promise<string> {
  const path = join(rig.root, 'mcp-token');
  await writeFile(path, `${TOKEN}\n`, { mode: 0o600 });
  await chmod(path, 0o600);
  return path;
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const post = (url: string, headers: Record<string, string>, body = initialize): Promise<Response> =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });

describe('one-works mcp over authenticated HTTP with the real droid', () => {
  it('drives sessions end to end for a client with the token; refuses a missing or wrong token (401), an oversized body (413) and a foreign Origin (403)', async () => {
    const model = await rigs.model({ steps: MCP_SCRIPT });
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: MCP_RIG_DROID, orchestrator: MCP_RIG_ORCHESTRATOR });
    const port = await freePort();
    const url = `http://127.0.0.1:${port}/mcp`;
    const server = rig.start(['mcp', '--http', `127.0.0.1:${port}`, '--token-file', await tokenFile(rig)]);
    await until(async () => (await fetch(url, { method: 'POST' }).catch(() => undefined)) !== undefined);

    const bearer = { authorization: `Bearer ${TOKEN}` };
    expect((await post(url, {})).status).toBe(401);
    expect((await post(url, { authorization: `Bearer ${TOKEN.slice(0, -1)}` })).status).toBe(401);
    const wrong = await post(url, { authorization: `Bearer ${TOKEN.replace(/.$/, '0')}` });
    expect([wrong.status, wrong.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="one-works"']);
    expect((await post(url, bearer, `{"pad":"${'x'.repeat(1024 * 1024)}"}`)).status).toBe(413);
    expect((await post(url, { ...bearer, origin: 'http://evil.example' })).status).toBe(403);
    expect((await post(url, bearer, '{"jsonrpc":')).status).toBe(400);
    expect((await fetch(url, { method: 'GET', headers: bearer })).status).toBe(405);
    const anonymous = new Client({ name: 'anonymous', version: '0' });
    await expect(anonymous.connect(new StreamableHTTPClientTransport(new URL(url)))).rejects.toMatchObject({ code: 401 });

    const client = new Client({ name: 'conformance', version: '0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }),
    );
    try {
      const seen = await exerciseTools(client, rig);
      const natives = await nativeIds(rig);
      expect(natives.length).toBeGreaterThan(0);
      for (const native of natives) expect(JSON.stringify(seen)).not.toContain(native);
    } finally {
      await client.close();
    }

    server.kill('SIGTERM');
    const exit = await server.result;
    expect(exit.exitCode, exit.stderr).toBe(0);
    await expectReaped(server.pid);
    await stopOrchestrator(rig.stateDir);
    expect(await waitForNoProcesses(() => rig.processes(), 10_000)).toEqual([]);
    expect(exit.stderr).toContain(`serving MCP on ${url}`);
    expect(exit.stderr).not.toContain(TOKEN);
    expect(exit.stderr).not.toContain('sk-rig-secret');
  });

  it('refuses to start without a token file, with a group-readable one, or on a non-loopback host', async () => {
    const model = await rigs.model({ steps: MCP_SCRIPT });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const port = await freePort();
    const noToken = await rig.run(['mcp', '--http', `127.0.0.1:${port}`]);
    expect([noToken.exitCode, noToken.stderr]).toEqual([2, expect.stringContaining('--http needs --token-file')]);
    const shared = await tokenFile(rig);
    await chmod(shared, 0o644);
    const readable = await rig.run(['mcp', '--http', `127.0.0.1:${port}`, '--token-file', shared]);
    expect([readable.exitCode, readable.stderr]).toEqual([2, expect.stringContaining(`chmod 600 ${shared}`)]);
    const exposed = await rig.run(['mcp', '--http', `0.0.0.0:${port}`, '--token-file', await tokenFile(rig)]);
    expect([exposed.exitCode, exposed.stderr]).toEqual([2, expect.stringContaining('only loopback hosts')]);
    expect(await rig.sessionIds()).toEqual([]);
  });
});
